import '../../../helpers/own-home';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { join, resolve } from 'node:path';
import { createShellTool } from '../../../../src/tools/builtin/shell';
import { executeTool } from '../../../../src/tools/execute-tool';
import type { ShellSandbox } from '../../../../src/tools/sandbox/sandbox';
import type { ToolResult } from '../../../../src/tools/types';
import { makeToolContext } from '../../../helpers/tool-context';
import { makeSandboxFixture, realProbe, realSandbox, type SandboxFixture } from '../../../helpers/sandbox-fixture';

// Escape corpus, kernel surfaces (docs/sandbox.md#seccomp): a C program compiled at test time
// tries what the seccomp filter must refuse, first unconfined (the control: the attack works on
// this machine) and then through the real shell tool in the sandbox.
const probe = await realProbe();
const hasGcc = spawnSync('gcc', ['--version']).status === 0;
const skip = probe.kind !== 'available' ? `no sandbox on this machine: ${probe.reason}` : hasGcc ? false : 'gcc is not installed (apt-get install gcc): the probe program cannot be compiled';

let fx: SandboxFixture;
let sandbox: ShellSandbox;
let program: string;
before(async () => {
  fx = await makeSandboxFixture();
  sandbox = realSandbox(fx, probe);
  program = join(fx.ws, 'kernel-surfaces');
  if (!skip) {
    const built = spawnSync('gcc', ['-O0', '-o', program, resolve('test/fixtures/sandbox/kernel-surfaces.c')], { encoding: 'utf8' });
    assert.equal(built.status, 0, built.stderr);
  }
});
after(async () => {
  sandbox?.dispose();
  await fx?.cleanup();
});

function run(command: string): Promise<ToolResult> {
  return executeTool(createShellTool({ killGraceMs: 300, drainMs: 2_000, sandbox }), { command }, makeToolContext(fx.ws));
}

test('sandboxed: an AF_UNIX socket made through io_uring (IORING_OP_SOCKET) cannot reach a daemon outside', { skip }, async (t) => {
  let connections = 0;
  const socketPath = join(fx.outside, 'daemon.sock');
  const daemon: Server = createServer((socket) => { connections++; socket.end(); });
  await new Promise<void>((done) => daemon.listen(socketPath, done));
  try {
    const control = spawnSync(program, ['uring-socket', socketPath], { encoding: 'utf8' });
    if (control.stdout.trim() !== 'connected') {
      t.skip(`io_uring does not work unconfined here either (${control.stdout.trim()}): nothing to prove`);
      return;
    }
    const connected = Date.now() + 15_000; // a safety bound only: a loaded machine may take a while
    while (connections === 0 && Date.now() < connected) await new Promise((r) => setTimeout(r, 10));
    assert.equal(connections, 1, 'the control connected');
    const result = await run(`./kernel-surfaces uring-socket ${socketPath}`);
    assert.equal(result.isError, true, result.content);
    assert.match(result.content, /io_uring_setup: errno 38 \(Function not implemented\)/);
    assert.doesNotMatch(result.content, /connected/);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(connections, 1, 'no connection reached the daemon from the sandbox');
  } finally {
    await new Promise((done) => daemon.close(done));
  }
});

test('sandboxed: bpf, userfaultfd, perf_event_open, the key-ring calls and ptrace are refused (EPERM)', { skip }, async () => {
  const result = await run('./kernel-surfaces syscalls');
  assert.equal(result.isError, undefined, result.content);
  for (const name of ['bpf', 'userfaultfd', 'perf_event_open', 'keyctl', 'add_key', 'request_key', 'ptrace']) {
    assert.match(result.content, new RegExp(`^${name}: errno 1 \\(Operation not permitted\\)$`, 'm'), `${name}:\n${result.content}`);
  }
});

test('sandboxed: ordinary work that may use io_uring underneath (node reading files) still runs', { skip }, async () => {
  const result = await run(`node -e "const fs=require('fs'); fs.promises.readFile('README.md','utf8').then((t)=>console.log('read', t.trim()))"`);
  assert.equal(result.isError, undefined, result.content);
  assert.match(result.content, /read hello/);
});
