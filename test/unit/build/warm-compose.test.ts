import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { getHeapSnapshot } from 'node:v8';
import { freshBufferPool, processFootprint, warmCompose } from '../../../src/cli/warm-compose';
import { composeApp } from '../../../src/cli/compose';
import { warmFirstRender } from '../../../components/warm-render';
import { stripAnsi } from '../../helpers/tui-app';

// The snapshot build's composition of a throwaway run (src/cli/warm-compose.ts): the process
// it runs in becomes the snapshot, so nothing of that run may be left in it — no listener,
// timer or handle, no file, and no string of it reachable in the heap.

const appDir = resolve('.');
/** A folder the composition makes (mkdtemp's six random characters after the prefix), and a run id (run-store.ts). */
const THROWAWAY = /legion-warm-compose-[A-Za-z0-9]{6}|\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-[a-z0-9]{6}/;

/** The strings of the heap, after the full GC a heap snapshot makes, that match `pattern`. */
async function heapStrings(pattern: RegExp): Promise<string[]> {
  const found = new Set<string>();
  let tail = '';
  for await (const chunk of getHeapSnapshot()) {
    const text = tail + String(chunk);
    for (const match of text.matchAll(new RegExp(pattern.source, 'g'))) found.add(match[0]);
    tail = text.slice(-200);
  }
  return [...found];
}

test('warm compose: leaves no listener, timer or handle, and removes its folder', async () => {
  const base = mkdtempSync(join(tmpdir(), 'warm-compose-test-'));
  try {
    const before = processFootprint();
    await warmCompose(appDir, base);
    assert.equal(processFootprint(), before);
    assert.deepEqual(readdirSync(base), [], 'the throwaway workspace and home are gone');
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test('warm compose: no string of its run (folder, run id) is left in the heap', async () => {
  const base = mkdtempSync(join(tmpdir(), 'warm-compose-test-'));
  try {
    await warmCompose(appDir, base);
    assert.deepEqual(await heapStrings(THROWAWAY), []);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test('warm compose: hands the composed new run to the build, which draws its first screen on it, and still leaves nothing', async () => {
  const base = mkdtempSync(join(tmpdir(), 'warm-compose-test-'));
  try {
    const before = processFootprint();
    let drawn = 0;
    await warmCompose(appDir, base, async (app) => {
      const screen = stripAnsi(await warmFirstRender(app.config, app));
      assert.ok(screen.includes(`run ${app.runId}`), `the status bar shows the composed run:\n${screen}`);
      drawn += 1;
    });
    assert.equal(drawn, 1, 'once, for the new run');
    assert.equal(processFootprint(), before);
    assert.deepEqual(readdirSync(base), []);
    assert.deepEqual(await heapStrings(THROWAWAY), []);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

// Buffer's pool of small allocations is not in a heap snapshot's strings, but it is in a
// start-up snapshot's bytes (and Buffer.allocUnsafe hands its stale bytes out).
test('warm compose: the pool Buffer allocates from afterwards holds no byte of its run', async () => {
  const base = mkdtempSync(join(tmpdir(), 'warm-compose-test-'));
  try {
    await warmCompose(appDir, base);
    const pool = Buffer.from(Buffer.allocUnsafe(1).buffer).toString('latin1');
    assert.equal(THROWAWAY.exec(pool), null);
    assert.ok(!pool.includes(base), 'no path of the run');
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});

test('fresh buffer pool: later small buffers come from a new pool, zeroed, and the old one keeps what was taken from it', () => {
  const kept = Buffer.from('kept bytes');
  const stale = Buffer.allocUnsafe(64).fill('x');
  const old = stale.buffer;
  freshBufferPool();
  const next = Buffer.allocUnsafe(16);
  assert.notEqual(next.buffer, old);
  assert.ok(new Uint8Array(next.buffer).every((b) => b === 0), 'the new pool is all zeros');
  assert.equal(kept.toString(), 'kept bytes');
});

// The detector itself: a composed run still held is found (else the test above proves nothing).
test('warm compose: the heap search finds a run that is still held', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'legion-warm-compose-'));
  try {
    const context = {
      args: { command: null, positionals: [], flags: new Map<string, string | true>(), global: { help: false, version: false, plain: false } },
      io: { stdout: () => undefined, stderr: () => undefined, env: { HOME: dir }, cwd: dir, isTTY: true },
      appDir, workspaceRoot: dir,
    };
    const app = await composeApp(context, { newRun: true });
    try {
      const found = await heapStrings(THROWAWAY);
      assert.ok(found.some((s) => s.includes(app.runId)), `the held run's id is found: ${found.join(', ')}`);
    } finally {
      await app.close('test');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
