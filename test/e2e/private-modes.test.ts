import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmod, lstat, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { bundlePath, ensureBundle } from '../helpers/bundle';
import { withTempDir } from '../helpers/tmp';

// Every file and folder a real run writes under .legion/ (and the user's config folder) is
// private, even under the common umask 022 that would make them world-readable.

const SCRIPT = `version: 1
replies:
  - agent: resource-agent
    on: message
    first: true
    toolCalls:
      - { name: spawn_agent, input: { id: scribe, name: Scribe, systemPrompt: "You write.", tools: [file_read] } }
      - { name: todo_write, input: { todos: [{ id: "1", content: "write notes", status: in_progress }] } }
      - { name: file_write, input: { path: notes.txt, content: "hello\\n" } }
  - { agent: resource-agent, on: tool-result, text: "done" }
  - { agent: ur-agent, on: message, text: "hi" }
`;

async function walk(root: string): Promise<{ path: string; mode: number; dir: boolean }[]> {
  const out: { path: string; mode: number; dir: boolean }[] = [];
  const visit = async (path: string): Promise<void> => {
    const s = await lstat(path);
    out.push({ path, mode: s.mode & 0o777, dir: s.isDirectory() });
    if (s.isDirectory()) for (const name of await readdir(path)) await visit(join(path, name));
  };
  await visit(root);
  return out;
}

function legion(dir: string, args: string[]) {
  const env = { PATH: process.env.PATH ?? '', HOME: dir, LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: join(dir, 'script.yaml') };
  // Through a shell so the umask is the one users commonly have.
  const command = `umask 022; exec "${process.execPath}" "${bundlePath}" "$@"`;
  return spawnSync('sh', ['-c', command, 'sh', ...args], { cwd: dir, env, encoding: 'utf8', timeout: 30_000, stdio: ['ignore', 'pipe', 'pipe'] });
}

test('a real run writes .legion/ private: every folder 0700, every file 0600 (umask 022)', async () => {
  ensureBundle({ e2e: true });
  await withTempDir(async (dir) => {
    await writeFile(join(dir, 'script.yaml'), SCRIPT);
    const r = legion(dir, ['run', '--to', 'resource-agent', '--approve', 'all', 'set things up']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, 'done\n');
    const entries = await walk(join(dir, '.legion'));
    const names = entries.map((e) => relative(dir, e.path));
    // The run wrote what it writes: the marker, participants (one spawned), run, sessions,
    // ledger, approvals, audit, todos, usage.
    for (const expected of [/legion\.json$/, /participants\/scribe\.json$/, /run\.json$/, /sessions\/.+\.jsonl$/, /events\.jsonl$/, /approvals\.jsonl$/, /audit\/audit-.+\.jsonl$/, /todos\.json$/, /usage\.json$/]) {
      assert.ok(names.some((n) => expected.test(n)), `${expected} among ${names.join(', ')}`);
    }
    // The checkpoints' git repository keeps git's own owner bits (read-only objects 0400,
    // executable hook samples 0700); no entry anywhere gives a group or others any access.
    const wrong = entries
      .filter((e) => (e.path.includes('/checkpoints/') ? (e.mode & 0o077) !== 0 : e.mode !== (e.dir ? 0o700 : 0o600)))
      .map((e) => `${relative(dir, e.path)} ${e.mode.toString(8)}`);
    assert.deepEqual(wrong, []);
    assert.doesNotMatch(r.stderr, /private/, 'a new workspace needs no tightening notice');
    // The workspace's own files (written by a tool for the user) keep the user's modes.
    assert.equal((await lstat(join(dir, 'notes.txt'))).mode & 0o777, 0o644);
  });
});

test('an existing world-readable workspace and config folder are tightened at start, with one notice', async () => {
  ensureBundle({ e2e: true });
  await withTempDir(async (dir) => {
    await writeFile(join(dir, 'script.yaml'), SCRIPT);
    assert.equal(legion(dir, ['run', 'hello']).status, 0);
    const config = join(dir, '.config', 'legion');
    await mkdir(config, { recursive: true });
    await writeFile(join(config, 'config.yaml'), 'ui: {}\n');
    for (const e of [...(await walk(join(dir, '.legion'))), ...(await walk(config))]) await chmod(e.path, e.dir ? 0o755 : 0o644);

    const r = legion(dir, ['run', 'hello again']);
    assert.equal(r.status, 0, r.stderr);
    const notices = r.stderr.split('\n').filter((l) => /private/.test(l));
    assert.equal(notices.length, 1, r.stderr);
    assert.match(notices[0]!, /^legion: warning: made \d+ file\(s\) and folder\(s\) in .*\.legion private \(owner only: folders 0700, files 0600\); made 3 file\(s\) and folder\(s\) in .*\.config\/legion private/);
    // 3: the folder, config.yaml and the trust registry (trusted-workspaces.json). workspace-trust.key (the first run made .legion/ and trusted it) is left
    // as it is: a key others could read stays refused until the user removes it (docs/workspace-trust.md).
    const key = join(config, 'workspace-trust.key');
    const wrong = [...(await walk(join(dir, '.legion'))), ...(await walk(config))].filter((e) => e.path !== key && e.mode !== (e.dir ? 0o700 : 0o600));
    assert.deepEqual(wrong, []);
    assert.equal((await lstat(key)).mode & 0o777, 0o644);
    assert.match(r.stderr, /untrusted workspace.*workspace-trust\.key is readable or writable by others/);

    const again = legion(dir, ['run', 'and again']);
    assert.equal(again.status, 0, again.stderr);
    assert.doesNotMatch(again.stderr, /private/, 'once tightened, no more notices');
    assert.match(again.stderr, /untrusted workspace/, 'the exposed key is not re-trusted by the tightening');
  });
});
