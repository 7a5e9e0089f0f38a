import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeSandbox, makeToolContext, type Sandbox } from '../../helpers/tool-context';
import { createShellTool } from '../../../src/tools/builtin/shell';
import { executeTool } from '../../../src/tools/execute-tool';
import type { ToolContext, ToolResult } from '../../../src/tools/types';

// drainMs 2 s: a loaded machine can run the drain timer before reading the pipe's last bytes (timers come first in
// libuv's loop), which cut outputs short; it only costs time when a background job holds the pipe. killGraceMs is
// safe short: SIGKILL follows it whatever the load.
const shell = createShellTool({ killGraceMs: 300, drainMs: 2_000, sandbox: 'none' });

async function withSandbox(fn: (sb: Sandbox, run: (input: unknown, overrides?: Partial<ToolContext>) => Promise<ToolResult>) => Promise<void>): Promise<void> {
  const sb = await makeSandbox();
  try {
    await fn(sb, (input, overrides) => executeTool(shell, input, makeToolContext(sb.root, overrides)));
  } finally {
    await sb.cleanup();
  }
}

/** Alive = exists and is not a zombie (a container's PID 1 may not reap orphans). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

async function pidsIn(dir: string, ...names: string[]): Promise<number[]> {
  return Promise.all(names.map(async (n) => Number((await readFile(join(dir, n), 'utf8')).trim())));
}

async function eventuallyDead(pids: number[]): Promise<void> {
  const end = Date.now() + 15_000; // a safety bound only: a loaded machine may take a while to reap them
  while (pids.some(isAlive) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  for (const pid of pids) assert.equal(isAlive(pid), false, `pid ${pid} still alive`);
}

test('shell runs in the workspace, interleaves stdout/stderr, reports the exit code', () =>
  withSandbox(async (sb, run) => {
    const ok = await run({ command: 'pwd; echo out; echo err >&2' });
    assert.equal(ok.isError, undefined, ok.content);
    assert.equal(ok.content, `${sb.root}\nout\nerr\n[exit code 0]`);
    assert.match(ok.summary ?? '', /exit 0/);
    const fail = await run({ command: 'echo partial; exit 3' });
    assert.equal(fail.isError, true);
    assert.equal(fail.content, 'partial\n[exit code 3]');
    assert.equal(fail.summary, 'echo partial; exit 3: exit 3');
    const quiet = await run({ command: 'true' });
    assert.equal(quiet.content, '(no output)\n[exit code 0]');
    const stdin = await run({ command: 'cat; echo done' });
    assert.equal(stdin.content, 'done\n[exit code 0]');
    const ansi = await run({ command: "printf '\\033[31mred\\033[0m\\n'" });
    assert.equal(ansi.content, 'red\n[exit code 0]');
    const killed = await run({ command: 'kill -9 $$' });
    assert.equal(killed.isError, true);
    assert.match(killed.content, /killed by SIGKILL/);
  }));

test('shell keeps provider keys out of the environment', () =>
  withSandbox(async (_sb, run) => {
    const saved = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = 'sk-legion-test-secret';
    try {
      const r = await run({ command: 'echo "[$OPENAI_API_KEY][$GIT_PAGER]"' });
      assert.equal(r.content, '[][cat]\n[exit code 0]');
    } finally {
      if (saved === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved;
    }
  }));

test('shell timeout kills the whole process group (background jobs included)', () =>
  withSandbox(async (sb, run) => {
    const started = Date.now();
    // 2 s: the commands sleep 30 s, so only the timeout ends them, and a loaded machine still runs `echo waiting` before it.
    const r = await run({ command: 'sleep 30 & echo $! > bg.pid; sleep 30 & echo $! > fg.pid; echo waiting; wait', timeoutMs: 2_000 });
    assert.equal(r.isError, true);
    assert.match(r.content, /^waiting\n\[timed out after 2000 ms; the process group was killed\]$/);
    assert.ok(Date.now() - started < 20_000, `took ${Date.now() - started} ms (the sleeps take 30 s)`);
    await eventuallyDead(await pidsIn(sb.root, 'bg.pid', 'fg.pid'));
  }));

test('shell timeout escalates to SIGKILL when SIGTERM is ignored', () =>
  withSandbox(async (sb, run) => {
    const started = Date.now();
    // 2 s: the bg.pid file must be written before the timeout, whatever the load; the sleeps take 30 s.
    const r = await run({ command: "trap '' TERM; (trap '' TERM; sleep 30) & echo $! > bg.pid; sleep 30; wait", timeoutMs: 2_000 });
    assert.equal(r.isError, true);
    assert.match(r.content, /timed out after 2000 ms/);
    assert.ok(Date.now() - started < 20_000, `took ${Date.now() - started} ms (the sleeps take 30 s)`);
    await eventuallyDead(await pidsIn(sb.root, 'bg.pid'));
  }));

test('aborting the signal kills the process group and reports an interruption', () =>
  withSandbox(async (sb, run) => {
    const controller = new AbortController();
    const pending = run({ command: 'sleep 30 & echo $! > bg.pid; sleep 30 & echo $! > fg.pid; wait' }, { signal: controller.signal });
    // Abort once both jobs have written their pid (event-driven: a fixed delay may come first on a loaded machine).
    const end = Date.now() + 15_000;
    const written = () => existsSync(join(sb.root, 'fg.pid')) && /^\d+\n$/.test(readFileSync(join(sb.root, 'fg.pid'), 'utf8'));
    while (!written() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    const r = await pending;
    assert.equal(r.isError, true);
    assert.match(r.content, /interrupted; the process group was killed/);
    await eventuallyDead(await pidsIn(sb.root, 'bg.pid', 'fg.pid'));
    const already = await run({ command: 'echo never' }, { signal: AbortSignal.abort() });
    assert.equal(already.isError, true);
    assert.match(already.content, /interrupted before it started/);
  }));

test('a background job holding the output pipe does not keep the call waiting', () =>
  withSandbox(async (sb, run) => {
    const started = Date.now();
    const r = await run({ command: 'sleep 20 & echo $! > bg.pid; echo started' });
    assert.equal(r.content, 'started\n[exit code 0]');
    assert.ok(Date.now() - started < 15_000, `took ${Date.now() - started} ms (the background job takes 20 s)`);
    const [pid] = await pidsIn(sb.root, 'bg.pid');
    process.kill(pid!, 'SIGKILL');
  }));

test('shell printing 100 MB is capped (head + tail + omitted marker) with bounded memory', () =>
  withSandbox(async (_sb, run) => {
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    const started = Date.now();
    const r = await run({ command: 'yes | head -c 100000000; echo; echo THE-END' }, { limits: { shellTimeoutMs: 30_000, toolOutputLimit: 10_000 } });
    clearInterval(sampler);
    assert.equal(r.isError, undefined, r.content.slice(-300));
    assert.ok(r.content.length <= 10_000, `${r.content.length} chars`);
    assert.match(r.content, /^y\ny\ny\n/);
    const omitted = /… (\d+) bytes omitted …/.exec(r.content);
    assert.ok(omitted);
    assert.ok(Number(omitted[1]) > 99_980_000 && Number(omitted[1]) < 100_000_000);
    assert.match(r.content, /y\n\nTHE-END\n\[exit code 0\]$/);
    assert.ok(peak - baseline < 60 * 1024 * 1024, `rss grew by ${Math.round((peak - baseline) / 1e6)} MB`);
    assert.ok(Date.now() - started < 15_000);
  }));

test('shell: bad input is an error result, nothing runs', () =>
  withSandbox(async (sb, run) => {
    const cases: [unknown, RegExp][] = [
      [{}, /command: .*expected string/],
      [{ command: ['ls'] }, /command: .*expected string/],
      [{ command: 'ls', timeoutMs: -1 }, /timeoutMs: /],
      [{ command: 'ls', timeoutMs: 'soon' }, /timeoutMs: .*expected number/],
      [{ command: 'ls', cwd: '/' }, /Unrecognized key: "cwd"/],
    ];
    for (const [input, pattern] of cases) {
      const r = await run(input);
      assert.equal(r.isError, true);
      assert.match(r.content, pattern);
    }
    assert.match((await run({ command: '   ' })).content, /command is empty/);
    assert.match((await run({ command: 'echo a\0b > nul.txt' })).content, /NUL/);
    assert.match((await run({ command: 'x'.repeat(200_000) })).content, /too long/);
    assert.equal((await readdir(sb.root)).includes('nul.txt'), false);
  }));
