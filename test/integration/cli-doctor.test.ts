import '../helpers/own-home';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawnSync } from 'node:child_process';
import { access, chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from '../helpers/cli';
import { withTempDir } from '../helpers/tmp';

// `legion doctor` in-process against a local stand-in for the provider's model list.
const APP_DIR = fileURLToPath(new URL('../../', import.meta.url));
const KEY = 'AIzaSy-doctor-test-key-0123456789';
let server: Server;
let base = '';
const seen: { url: string; auth: string | undefined }[] = [];
before(async () => {
  server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', auth: req.headers.authorization });
    if (req.url?.startsWith('/silent/')) return; // never answers
    if (req.url?.startsWith('/refuse/')) { res.writeHead(401, { 'content-type': 'application/json' }); res.end('[{"error":{"code":401}}]'); return; }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"object":"list","data":[]}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

/** A PATH holding fake `tmux` and `bwrap` that print a version (beside the workspace `dir`, not in it). */
async function fakeTools(dir: string): Promise<string> {
  const bin = `${dir}-bin`;
  await mkdir(bin);
  after(() => rm(bin, { recursive: true, force: true }));
  for (const [name, line] of [['tmux', 'tmux 9.9'], ['bwrap', 'bubblewrap 9.9']]) {
    await writeFile(join(bin, name), `#!/bin/sh\necho "${line}"\n`, { mode: 0o755 });
  }
  return bin;
}

const doctor = (dir: string, env: Record<string, string>, extra: string[] = []) =>
  runCli(['doctor', ...extra], { cwd: dir, env: { HOME: dir, ...env }, appDir: APP_DIR });

test('doctor: everything fine → ✓ lines only, exit 0; --json says the same; the key value never shows', async () => {
  await withTempDir(async (dir) => {
    const env = { GEMINI_API_KEY: KEY, GEMINI_BASE_URL: `${base}/ok/v1beta/openai/`, PATH: await fakeTools(dir) };
    assert.equal((await runCli(['init'], { cwd: dir, env: { HOME: dir }, appDir: APP_DIR })).code, 0);
    const r = await doctor(dir, env);
    assert.equal(r.code, 0, r.stdout);
    const lines = r.stdout.trimEnd().split('\n');
    assert.ok(lines.every((l) => l.startsWith('✓ ')), r.stdout);
    assert.match(r.stdout, /✓ provider keys set: GEMINI_API_KEY\n/);
    assert.match(r.stdout, /✓ gemini · gemini-2\.5-flash @ 127\.0\.0\.1:\d+ answers \(HTTP 200/);
    assert.match(r.stdout, /✓ gemini-2\.5-flash: \$0\.3 input \/ \$2\.5 output per million tokens\n✓ gemini-2\.5-flash: context window 1,048,576 tokens\n/);
    assert.match(r.stdout, /✓ tmux: tmux 9\.9 /);
    assert.match(r.stdout, /✓ MCP servers: none configured\n/);
    assert.match(r.stdout, /\.legion is writable and private\n/);
    assert.match(r.stdout, /✓ .*\.legion is trusted: its config, rules, participants and allowances apply\n/, 'legion init created it trusted');
    assert.deepEqual(seen.at(-1), { url: '/ok/v1beta/openai/models', auth: `Bearer ${KEY}` });

    const json = await doctor(dir, env, ['--json']);
    assert.equal(json.code, 0);
    const report = JSON.parse(json.stdout) as { ok: boolean; checks: { name: string; ok: boolean }[] };
    assert.equal(report.ok, true);
    assert.deepEqual(report.checks.map((c) => c.name), ['node', 'keys', 'provider', 'price', 'context', 'tmux', 'bwrap', 'mcp', 'workspace', 'trust', 'locks', 'instructions', 'hooks', 'agents', 'skills']);
    for (const out of [r.stdout, r.stderr, json.stdout]) assert.ok(!out.includes(KEY));
  });
});

test('doctor: each problem is a ✗ line with its fix, and the exit code is 1', async () => {
  await withTempDir(async (dir) => {
    assert.equal((await runCli(['init'], { cwd: dir, env: { HOME: dir }, appDir: APP_DIR })).code, 0);
    // A world-readable workspace and a lock left by a process that is gone.
    await chmod(join(dir, '.legion'), 0o755);
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    await mkdir(join(dir, '.legion', 'runs', 'r1'), { recursive: true, mode: 0o700 });
    await writeFile(join(dir, '.legion', 'runs', 'r1', 'lock'), JSON.stringify({ pid: dead, hostname: hostname(), startedAt: new Date().toISOString() }), { mode: 0o600 });
    const r = await doctor(dir, { GEMINI_API_KEY: KEY, GEMINI_BASE_URL: `${base}/refuse/v1beta/openai/`, LEGION_MODEL: 'gemini-9-ultra', PATH: '' });
    assert.equal(r.code, 1);
    const expectations: RegExp[] = [
      /✗ gemini · gemini-9-ultra @ [^ ]+ does not answer: 127\.0\.0\.1:\d+ refused the key \(HTTP 401\)\n    fix: check GEMINI_API_KEY\n/,
      /✗ gemini-9-ultra: no price known \(costs show as unknown\)\n    fix: add gemini-9-ultra to ~\/\.config\/legion\/models\.yaml/,
      /✗ gemini-9-ultra: context window not known\n    fix: add contextWindow/,
      /✗ tmux not found \(the end-to-end tests drive Legion in tmux\)\n    fix: install tmux/,
      /✗ .*\.legion: 1 path\(s\) readable by other users .*\n    fix: start legion once \(it tightens them\), or chmod -R go-rwx /,
      /✗ stale run lock\(s\), their Legion is gone: r1\n    fix: harmless: the next start of that run takes it over; or delete .*runs\/r1\/lock\n/,
    ];
    for (const e of expectations) assert.match(r.stdout, e);
    if (process.platform === 'linux') assert.match(r.stdout, /✗ bwrap not found \(the shell sandbox\)\n    fix: install bubblewrap/);
    assert.ok(!r.stdout.includes(KEY));
  });
});

test('doctor: no key at all, a provider that does not answer in time, a provider that cannot be used', async () => {
  await withTempDir(async (dir) => {
    const none = await doctor(dir, { PATH: '' });
    assert.match(none.stdout, /✗ no provider key set \(Legion runs its scripted demo\)\n    fix: set ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY\n/);
    assert.match(none.stdout, /✓ demo: no model is called\n/);

    const silent = await doctor(dir, { GEMINI_API_KEY: KEY, GEMINI_BASE_URL: `${base}/silent/v1beta/openai/`, PATH: '' }, ['--timeout', '200']);
    assert.match(silent.stdout, /✗ .* does not answer: no answer from 127\.0\.0\.1:\d+ within 0\.2 s\n    fix: check your network/);

    const unusable = await doctor(dir, { LEGION_PROVIDER: 'gemini', PATH: '' });
    assert.match(unusable.stdout, /✗ no provider can be used\n    fix: provider gemini \(LEGION_PROVIDER\) needs an API key: set GEMINI_API_KEY\n/);
    assert.equal((await doctor(dir, {}, ['--timeout', 'soon'])).code, 2);
  });
});

test('doctor: a bwrap or tmux in a folder of the workspace on PATH (an activated .venv/bin) is never run; the one outside is checked', async () => {
  await withTempDir(async (dir) => {
    const venv = join(dir, '.venv', 'bin');
    await mkdir(venv, { recursive: true });
    for (const name of ['tmux', 'bwrap']) {
      await writeFile(join(venv, name), `#!/bin/sh\ntouch "${join(dir, `PWNED-${name}`)}"\necho "${name} 6.6"\n`, { mode: 0o755 });
    }
    assert.equal((await runCli(['init'], { cwd: dir, env: { HOME: dir }, appDir: APP_DIR })).code, 0);
    const r = await doctor(dir, { PATH: `${venv}:${await fakeTools(dir)}` });
    for (const name of ['tmux', 'bwrap']) {
      await assert.rejects(access(join(dir, `PWNED-${name}`)), `the planted ${name} ran`);
    }
    assert.match(r.stdout, /✓ tmux: tmux 9\.9 /);
    assert.doesNotMatch(r.stdout, /6\.6/);
  });
});
