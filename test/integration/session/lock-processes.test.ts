import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { once } from 'node:events';
import { layoutFor } from '../../../src/storage/layout';
import { withTempDir } from '../../helpers/tmp';

const CHILD = join(import.meta.dirname, 'fixtures', 'lock-child.ts');
const RUN = '2026-11-21T19-30-00-abc123';

interface ChildResult { pid: number; ok: boolean; error?: string; recovered?: boolean }

function start(workspace: string): { child: ChildProcess; result: Promise<ChildResult> } {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, workspace, RUN], { stdio: ['pipe', 'pipe', 'inherit'] });
  const result = new Promise<ChildResult>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl !== -1) resolve(JSON.parse(out.slice(0, nl)) as ChildResult);
    });
    child.on('exit', (code) => reject(new Error(`child exited (${code}) before reporting`)));
  });
  return { child, result };
}

test('two Legion processes race for one run: exactly one drives it; a SIGKILLed holder leaves a lock the next one recovers', { timeout: 30_000 }, async () => {
  await withTempDir(async (dir) => {
    const layout = layoutFor(dir);
    await mkdir(layout.runDir(RUN), { recursive: true });
    const a = start(dir);
    const b = start(dir);
    const results = await Promise.all([a.result, b.result]);
    assert.equal(results.filter((r) => r.ok).length, 1, JSON.stringify(results));
    const winner = results.find((r) => r.ok)!;
    const loser = results.find((r) => !r.ok)!;
    assert.match(loser.error!, new RegExp(`^run ${RUN} is in use by another Legion \\(pid ${winner.pid}, since .+\\): open it read-only with \`legion show\`, or start a new run with --new$`));
    const [holder, other] = winner === results[0] ? [a, b] : [b, a];
    await once(other.child, 'exit').catch(() => undefined);
    assert.equal(JSON.parse(await readFile(layout.runLock(RUN), 'utf8')).pid, winner.pid);

    // A crash (SIGKILL: no exit handler runs) leaves the lock file behind, stale.
    holder.child.kill('SIGKILL');
    await once(holder.child, 'exit');
    assert.equal(existsSync(layout.runLock(RUN)), true);

    const c = start(dir);
    const recovered = await c.result;
    assert.equal(recovered.ok, true);
    assert.equal(recovered.recovered, true);
    // A clean exit releases through the exit handler.
    c.child.stdin!.end();
    const [code] = await once(c.child, 'exit');
    assert.equal(code, 0);
    assert.equal(existsSync(layout.runLock(RUN)), false);
  });
});
