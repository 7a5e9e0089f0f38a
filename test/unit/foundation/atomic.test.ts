import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { writeJsonAtomic, writeJsonAtomicSync } from '../../../src/storage/atomic';
import { withTempDir } from '../../helpers/tmp';

test('writeJsonAtomic: writes pretty JSON, creates folders, replaces, leaves no temp file', async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, 'a', 'b', 'x.json');
    await writeJsonAtomic(path, { v: 1 });
    await writeJsonAtomic(path, { v: 2, list: [1] });
    assert.equal(await readFile(path, 'utf8'), '{\n  "v": 2,\n  "list": [\n    1\n  ]\n}\n');
    writeJsonAtomicSync(path, { v: 3 });
    assert.deepEqual(JSON.parse(await readFile(path, 'utf8')), { v: 3 });
    assert.deepEqual(await readdir(join(dir, 'a', 'b')), ['x.json']);
  });
});

test('writeJsonAtomic: a failed write leaves the old file and no temp file', async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, 'x.json');
    await writeJsonAtomic(path, { v: 1 });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await assert.rejects(writeJsonAtomic(path, cyclic), /circular/i);
    // Renaming over a folder fails after the temp file was written: it must be removed.
    const folder = join(dir, 'folder');
    await writeJsonAtomic(join(folder, 'inner.json'), {});
    await assert.rejects(writeJsonAtomic(folder, { v: 2 }));
    assert.throws(() => writeJsonAtomicSync(folder, { v: 2 }));
    assert.deepEqual(JSON.parse(await readFile(path, 'utf8')), { v: 1 });
    assert.deepEqual((await readdir(dir)).sort(), ['folder', 'x.json']);
  });
});

/**
 * The crash test: a child process rewrites one JSON file in a tight loop; it is SIGKILLed
 * at random moments. After every kill the file must parse and be one of the complete values.
 * The module under test is bundled to plain JS so each child starts fast (no tsx).
 */
test('writeJsonAtomic survives SIGKILL mid-write (20 kills, async and sync writers)', async () => {
  await withTempDir(async (dir) => {
    const moduleFile = join(dir, 'atomic.mjs');
    await build({ entryPoints: [resolve('src/storage/atomic.ts')], outfile: moduleFile, bundle: true, platform: 'node', format: 'esm', logLevel: 'silent' });
    // Values of different sizes (up to ~1 MB) so a kill often lands inside a write.
    const values = [0, 1, 2, 3, 4].map((k) => ({ k, payload: String(k).repeat(20_000 * (k * k + 1)) }));
    const target = join(dir, 'state.json');
    await writeFile(join(dir, 'values.json'), JSON.stringify(values));
    await writeJsonAtomic(target, values[0]);
    const child = `
      import { readFileSync } from 'node:fs';
      import { writeJsonAtomic, writeJsonAtomicSync } from ${JSON.stringify(moduleFile)};
      const values = JSON.parse(readFileSync(${JSON.stringify(join(dir, 'values.json'))}, 'utf8'));
      const sync = process.argv[1] === 'sync';
      for (let i = 1; ; i++) {
        const v = values[i % values.length];
        if (sync) writeJsonAtomicSync(${JSON.stringify(target)}, v); else await writeJsonAtomic(${JSON.stringify(target)}, v);
        if (i === 1) process.stdout.write('looping\\n');
      }`;
    const seen = new Set<number>();
    for (let round = 0; round < 20; round++) {
      const proc = spawn(process.execPath, ['--input-type=module', '-e', child, round % 2 ? 'sync' : 'async'], { stdio: ['ignore', 'pipe', 'inherit'] });
      await new Promise<void>((ok, fail) => {
        proc.stdout.once('data', () => ok());
        proc.once('exit', (code) => fail(new Error(`writer exited early (${code})`)));
      });
      await new Promise((r) => setTimeout(r, Math.random() * 25));
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGKILL');
      await exited;
      const text = await readFile(target, 'utf8');
      let parsed: { k: number; payload: string };
      assert.doesNotThrow(() => (parsed = JSON.parse(text)), `round ${round}: the file does not parse (${text.length} bytes)`);
      assert.deepEqual(parsed!, values[parsed!.k], `round ${round}: not one of the complete values`);
      seen.add(parsed!.k);
    }
    // Proof that the kills landed at different moments (else the test could not fail).
    assert.ok(seen.size >= 2, `the file always held value ${[...seen]}`);
    // Killed writers may leave temp files, never anything that looks like the target.
    for (const name of await readdir(dir)) assert.ok(name.endsWith('.tmp') || ['state.json', 'values.json', 'atomic.mjs'].includes(name), name);
  });
});
