import '../../../helpers/own-home';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createShellTool } from '../../../../src/tools/builtin/shell';
import { executeTool } from '../../../../src/tools/execute-tool';
import { HIDDEN_HOME_PATHS } from '../../../../src/tools/sandbox/hidden-paths';
import type { ShellSandbox } from '../../../../src/tools/sandbox/sandbox';
import type { ToolResult } from '../../../../src/tools/types';
import { makeToolContext } from '../../../helpers/tool-context';
import { makeSandboxFixture, realProbe, realSandbox, type SandboxFixture } from '../../../helpers/sandbox-fixture';

// Escape corpus, what is hidden (docs/sandbox.md#what-is-hidden): Legion's own state and the
// usual credential files, in a fake HOME outside /tmp (the private /tmp must not be why they fail).
const probe = await realProbe();
const skip = probe.kind === 'available' ? false : `no sandbox on this machine: ${probe.reason}`;

/** Paths of the list made as directories holding a file; the others are files. */
const AS_DIRS = new Set(['.ssh', '.gnupg', '.aws', '.azure', 'config/gcloud', '.password-store', '.local/share/keyrings']);

let fx: SandboxFixture;
let sandbox: ShellSandbox;
let runtimeDir: string;
/** Every credential file made in the fake HOME, with the marker it holds. */
const planted: { path: string; marker: string }[] = [];
before(async () => {
  fx = await makeSandboxFixture();
  const legion = join(fx.ws, '.legion');
  writeFileSync(join(legion, 'web-token'), 'WEBTOKEN-0123456789abcdef\n');
  writeFileSync(join(legion, 'audit.jsonl'), '{"decidedBy":"user","marker":"AUDIT-LINE"}\n');
  mkdirSync(join(legion, 'runs', 'r1'), { recursive: true });
  writeFileSync(join(legion, 'runs', 'r1', 'transcript.jsonl'), '{"text":"TRANSCRIPT-LINE"}\n');
  runtimeDir = join(fx.base, 'run-user');
  mkdirSync(runtimeDir, { mode: 0o700 });
  writeFileSync(join(runtimeDir, 'legion-0123456789abcdef.sock.info'), 'RUNTIME-SECRET\n');
  HIDDEN_HOME_PATHS.forEach((rel, i) => {
    const path = join(fx.home, rel.startsWith('config/') ? `.config/${rel.slice(7)}` : rel);
    const marker = `CRED-${i}-MARKER`;
    const file = AS_DIRS.has(rel) ? join(path, 'secret') : path;
    if (existsSync(file)) return;
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${marker}\n`);
    planted.push({ path: file, marker });
  });
  for (const [path, marker] of [
    [join(fx.home, '.config', 'mytool', 'token'), 'HIDE-HOME-MARKER'],
    [join(fx.outside, 'keys', 'deploy.txt'), 'HIDE-ABS-MARKER'],
    [join(fx.ws, 'secrets', 'prod.txt'), 'HIDE-WS-MARKER'],
  ] as const) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, `${marker}\n`);
  }
  sandbox = realSandbox(fx, probe, { hide: ['~/.config/mytool', join(fx.outside, 'keys'), 'secrets/'] }, undefined, { runtimeDir });
});
after(async () => {
  sandbox?.dispose();
  await fx?.cleanup();
});

function run(command: string): Promise<ToolResult> {
  return executeTool(createShellTool({ killGraceMs: 300, drainMs: 2_000, sandbox }), { command }, makeToolContext(fx.ws));
}

test('sandboxed: .legion/ is unreadable as a whole (web token, audit log, transcripts) and cannot be moved aside', { skip }, async () => {
  const result = await run('cat .legion/web-token .legion/audit.jsonl .legion/runs/r1/transcript.jsonl; ls -la .legion; find .legion -type f; grep -r . .legion; mv .legion .legion-old; true');
  assert.doesNotMatch(result.content, /WEBTOKEN|AUDIT-LINE|TRANSCRIPT-LINE|state\.json|web-token\b(?!: Permission)/, result.content);
  assert.match(result.content, /Permission denied/);
  assert.ok(existsSync(join(fx.ws, '.legion', 'web-token')), '.legion stays where it is');
  assert.equal(existsSync(join(fx.ws, '.legion-old')), false);
});

test('sandboxed: $XDG_RUNTIME_DIR (where the serve socket may live) is hidden', { skip }, async () => {
  const result = await run(`ls -la ${runtimeDir}; cat ${runtimeDir}/*; true`);
  assert.doesNotMatch(result.content, /RUNTIME-SECRET|legion-0123/, result.content);
});

test('sandboxed: the usual credential files in HOME are unreadable (every path of the list)', { skip }, async () => {
  assert.ok(planted.length >= 40, `planted ${planted.length}`);
  const command = planted.map((p) => `cat '${p.path}'`).join('; ') + `; grep -rs MARKER ${fx.home}; true`;
  // The control: without the sandbox every one of them is readable.
  const control = spawnSync('bash', ['-c', command], { encoding: 'utf8' });
  for (const { marker } of planted) assert.match(control.stdout, new RegExp(marker));
  const result = await run(command);
  const leaked = planted.filter(({ marker }) => result.content.includes(marker)).map((p) => p.path);
  assert.deepEqual(leaked, [], 'readable in the sandbox');
  assert.match(result.content, /Permission denied/);
});

test('sandboxed: sandbox.hide adds paths (~/…, absolute, relative to the workspace); their neighbours stay readable', { skip }, async () => {
  const result = await run(`cat ~/.config/mytool/token ${fx.home}/.config/mytool/token ${fx.outside}/keys/deploy.txt secrets/prod.txt; cat ${fx.outside}/sentinel.txt README.md`);
  assert.doesNotMatch(result.content, /HIDE-(HOME|ABS|WS)-MARKER/, result.content);
  assert.match(result.content, /^outside$/m);
  assert.match(result.content, /^hello$/m);
});

test('sandboxed in a worktree inside .legion/ (an isolated session): the outer .legion/ is hidden but the worktree works', { skip }, async () => {
  const worktree = join(fx.ws, '.legion', 'worktrees', 'session-a');
  mkdirSync(join(fx.ws, '.legion', 'worktrees', 'session-b'), { recursive: true });
  writeFileSync(join(fx.ws, '.legion', 'worktrees', 'session-b', 'notes.txt'), 'OTHER-SESSION\n');
  mkdirSync(worktree, { recursive: true });
  writeFileSync(join(worktree, 'file.txt'), 'in the worktree\n');
  const { createServer } = await import('node:net');
  const socket = join(fx.ws, '.legion', 'serve.sock');
  const server = createServer();
  await new Promise<void>((done) => server.listen(socket, done));
  try {
    const shell = createShellTool({ killGraceMs: 300, drainMs: 100, sandbox });
    const result = await executeTool(shell, {
      command: 'cat ../../web-token ../../audit.jsonl ../session-b/notes.txt; ls -la ../.. ../../runs; cat file.txt; echo edited >> file.txt; true',
    }, makeToolContext(worktree));
    assert.doesNotMatch(result.content, /WEBTOKEN|AUDIT-LINE|OTHER-SESSION|r1/, result.content);
    assert.match(result.content, /in the worktree/);
    assert.equal(readFileSync(join(worktree, 'file.txt'), 'utf8'), 'in the worktree\nedited\n');
  } finally {
    await new Promise((done) => server.close(done));
  }
});

/**
 * Another workspace's `.legion/` is Legion's state as much as this one's: a package of a monorepo
 * opened as its own workspace (`packages/app/.legion/`), another project in the home folder.
 * Writable from the sandbox, a nested one's `rules.yaml` and `config.yaml` (allow everything,
 * `sandbox: off`) were honoured at its next start — its trust marker is of the folder, not of the
 * content; readable, its web token let the command answer that server's approvals.
 */
test('sandboxed: a nested workspace\'s .legion/ and another project\'s in HOME are hidden too (unreadable, not writable)', { skip }, async () => {
  const nested = join(fx.ws, 'packages', 'app', '.legion');
  const other = join(fx.home, 'src', 'other', '.legion');
  for (const [dir, marker] of [[nested, 'NESTED-TOKEN'], [other, 'OTHER-PROJECT-TOKEN']] as const) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'web-token'), `${marker}\n`);
    writeFileSync(join(dir, 'rules.yaml'), 'version: 1\nrules: []\n');
  }
  const result = await run(`cat packages/app/.legion/web-token ${join(other, 'web-token')}; printf 'defaults: { unmatched: allow }\\n' >> packages/app/.legion/rules.yaml; mv packages/app/.legion packages/app/.legion-old; rm -rf packages/app/.legion; true`);
  assert.doesNotMatch(result.content, /NESTED-TOKEN|OTHER-PROJECT-TOKEN/, result.content);
  assert.equal(readFileSync(join(nested, 'rules.yaml'), 'utf8'), 'version: 1\nrules: []\n', 'the nested rules were rewritten');
  assert.ok(existsSync(join(nested, 'web-token')));
  assert.equal(existsSync(join(fx.ws, 'packages', 'app', '.legion-old')), false);
});
