import '../../../helpers/own-home';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { homedir } from 'node:os';
import { createShellTool } from '../../../../src/tools/builtin/shell';
import { executeTool } from '../../../../src/tools/execute-tool';
import type { ShellSandbox } from '../../../../src/tools/sandbox/sandbox';
import { findPidsCgroups } from '../../../../src/tools/sandbox/pids-cgroup';
import type { ToolResult } from '../../../../src/tools/types';
import { makeToolContext } from '../../../helpers/tool-context';
import { makeSandboxFixture, realProbe, realSandbox, type SandboxFixture } from '../../../helpers/sandbox-fixture';

// The escape corpus of docs/sandbox.md, through the real shell tool with the sandbox on.
const probe = await realProbe();
const skip = probe.kind === 'available' ? false : `no sandbox on this machine: ${probe.reason}`;

let fx: SandboxFixture;
let sandbox: ShellSandbox;
before(async () => {
  fx = await makeSandboxFixture();
  sandbox = realSandbox(fx, probe);
});
after(async () => {
  sandbox?.dispose();
  await fx?.cleanup();
});

function run(command: string, signal?: AbortSignal): Promise<ToolResult> {
  const shell = createShellTool({ killGraceMs: 300, drainMs: 2_000, sandbox });
  return executeTool(shell, { command }, makeToolContext(fx.ws, signal ? { signal } : {}));
}

async function mustFail(command: string, blockedLine?: RegExp): Promise<ToolResult> {
  const result = await run(command);
  assert.equal(result.isError, true, `expected failure for ${command}:\n${result.content}`);
  if (blockedLine) assert.match(result.content, blockedLine);
  return result;
}

test('sandboxed: ordinary work still passes (files, git status, npm --version, a build writing dist/)', { skip }, async () => {
  const result = await run([
    'echo written > notes.txt && cat notes.txt',
    'git status --short',
    'npm --version >/dev/null',
    'mkdir -p dist && node -e "require(\'fs\').writeFileSync(\'dist/out.js\', \'built\')"',
    'echo tmp > /tmp/scratch && cat /tmp/scratch',
  ].join(' && '));
  assert.equal(result.isError, undefined, result.content);
  assert.match(result.content, /written/);
  assert.equal(createShellTool({ sandbox }).sandboxed, true);
  assert.equal(await readFile(join(fx.ws, 'dist', 'out.js'), 'utf8'), 'built');
  assert.equal(await readFile(join(fx.ws, 'notes.txt'), 'utf8'), 'written\n');
});

test('sandboxed: writes outside the workspace fail and say the sandbox blocked them', { skip }, async () => {
  const marker = `legion-escape-${process.pid}-${Date.now()}`;
  const home = homedir();
  await mustFail(`touch ${home}/${marker}`, /blocked by the sandbox: write outside the workspace/);
  assert.equal(existsSync(join(home, marker)), false);
  await mustFail(`echo x >> /etc/${marker}`, /blocked by the sandbox: write outside the workspace/);
  assert.equal(existsSync(`/etc/${marker}`), false);
  await mustFail('echo planted > .legion/state.json', /Permission denied/);
  assert.equal(readFileSync(join(fx.ws, '.legion', 'state.json'), 'utf8'), '{}\n');
  await mustFail('echo "#!/bin/sh" > .git/hooks/pre-commit', /Read-only file system/);
  assert.equal(existsSync(join(fx.ws, '.git', 'hooks', 'pre-commit')), false);
  await mustFail('git config core.hooksPath /somewhere');
  assert.doesNotMatch(readFileSync(join(fx.ws, '.git', 'config'), 'utf8'), /hooksPath/);
  await mustFail('echo through > link/sentinel.txt', /Read-only file system/);
  assert.equal(readFileSync(join(fx.outside, 'sentinel.txt'), 'utf8'), 'outside\n');
  // The host's /tmp is not the command's: the write lands in a private /tmp and is gone.
  const tmp = await run(`echo x > /tmp/${marker} && false`);
  assert.equal(tmp.isError, true);
  assert.equal(existsSync(`/tmp/${marker}`), false);
});

test('sandboxed: secrets are unreadable (~/.ssh, a .env next to the workspace, in HOME, in the workspace)', { skip }, async () => {
  for (const path of [join(fx.home, '.ssh', 'id_rsa'), join(fx.base, '.env'), join(fx.home, 'proj', '.env'), '.env']) {
    const result = await mustFail(`cat ${path}`);
    assert.doesNotMatch(result.content, /PRIVATE-KEY|TOKEN=/, path);
  }
  // Ordinary files next to them stay readable.
  const ok = await run(`cat ${join(fx.outside, 'sentinel.txt')}`);
  assert.equal(ok.isError, undefined, ok.content);
});

test('sandboxed: no network: a local TCP server and a Unix socket outside are unreachable', { skip }, async () => {
  let connections = 0;
  const tcp: Server = createServer((socket) => { connections++; socket.end(); });
  await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
  const unixPath = join(fx.outside, 'daemon.sock');
  const unix: Server = createServer((socket) => { connections++; socket.end(); });
  await new Promise<void>((resolve) => unix.listen(unixPath, resolve));
  try {
    const port = (tcp.address() as { port: number }).port;
    await mustFail(`exec 3<>/dev/tcp/127.0.0.1/${port}`, /blocked by the sandbox: no network/);
    const viaUnix = await mustFail(`node -e "require('net').connect('${unixPath}').on('connect', () => process.exit(0)).on('error', (e) => { console.error(e.message); process.exit(1) })"`);
    assert.match(viaUnix.content, /EPERM|not permitted/);
    assert.equal(connections, 0);
  } finally {
    await new Promise((resolve) => tcp.close(resolve));
    await new Promise((resolve) => unix.close(resolve));
  }
});

test('sandboxed: the Legion process is invisible: kill of the parent fails', { skip }, async () => {
  await mustFail(`kill -9 ${process.pid}`, /invisible/);
  await mustFail(`kill -0 ${process.ppid}`);
  const own = await run('ls /proc | grep -c "^[0-9]"');
  assert.ok(Number(own.content.split('\n')[0]) < 10, `the command sees only its own processes:\n${own.content}`);
});

test('sandboxed: nested namespaces are refused (the read-only binds cannot be undone)', { skip }, async () => {
  await mustFail('unshare -Urm sh -c "umount -l $PWD/.legion && echo x > .legion/state.json"');
  assert.equal(readFileSync(join(fx.ws, '.legion', 'state.json'), 'utf8'), '{}\n');
});

test('sandboxed: a fork bomb stops at the process limit', { skip: skip || (findPidsCgroups() ? false : 'no writable pids cgroup here') }, async () => {
  const limited = realSandbox(fx, probe, {}, 32);
  // Every per-call cgroup of this process is gone once the call ended, without waiting for dispose's sweep.
  const v1 = '/sys/fs/cgroup/pids';
  const left = () => (existsSync(v1) ? readdirSync(v1) : []).filter((name) => name.startsWith(`legion-${process.pid}-`));
  try {
    const shell = createShellTool({ killGraceMs: 300, drainMs: 2_000, sandbox: limited });
    const result = await executeTool(shell, {
      command: `perl -e 'for (1..200) { my $p = fork; die "fork failed: $!\\n" unless defined $p; if (!$p) { sleep 30; exit 0 } }'`,
    }, makeToolContext(fx.ws));
    assert.equal(result.isError, true, result.content);
    assert.match(result.content, /fork failed: Resource temporarily unavailable/);
    assert.match(result.content, /blocked by the sandbox: at most 32 processes/);
    for (let i = 0; i < 100 && left().length > 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(left(), [], 'the call that hit the limit left no cgroup behind');
  } finally {
    limited.dispose();
  }
});

function pidsWithArgument(token: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').includes(token)) out.push(Number(name));
    } catch {
      // gone
    }
  }
  return out;
}

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

test('sandboxed: cancel kills the whole process tree, background processes included', { skip }, async () => {
  const token = String(900_000 + (process.pid % 90_000));
  const controller = new AbortController();
  const pending = run(`(sleep ${token} &) ; sleep ${token} & sh -c "sleep ${token}" & echo started; wait`, controller.signal);
  let pids: number[] = [];
  const started = Date.now() + 15_000; // a safety bound only
  while (pids.length < 3 && Date.now() < started) {
    await new Promise((r) => setTimeout(r, 25));
    pids = pidsWithArgument(token);
  }
  assert.equal(pids.length, 3, 'three sleeps started');
  controller.abort();
  const result = await pending;
  assert.equal(result.isError, true);
  assert.match(result.content, /interrupted/);
  const reaped = Date.now() + 15_000; // a safety bound only: a loaded machine may take a while
  while (pids.some(alive) && Date.now() < reaped) await new Promise((r) => setTimeout(r, 25));
  assert.deepEqual(pids.filter(alive), [], 'every sandboxed process is gone');
});
