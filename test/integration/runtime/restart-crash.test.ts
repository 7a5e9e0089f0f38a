import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { planRepair } from '../../../src/model/repair';
import { toolUsesOf } from '../../../src/model/message';
import { readSessionFile } from '../../../src/session/session-files';
import { layoutFor } from '../../../src/storage/layout';
import { assertAllValid, eventsOf } from '../../helpers/runtime-assert';
import { startRestartHarness } from '../../helpers/restart-fixture';
import { runCli } from '../../helpers/cli';
import { APP_DIR } from '../../helpers/app-harness';
import { withTempDir } from '../../helpers/tmp';

const CHILD = join(import.meta.dirname, '..', '..', 'helpers', 'restart-approvals-child.ts');

/** Run the child until it has an approval pending for the user, then SIGKILL it (no shutdown). */
async function crashWhilePending(dir: string, agent: string, message: string): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir, agent, message], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => void (err += d.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const requestId = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /^pending (\S+)$/m.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on('exit', () => reject(new Error(`the child exited first: ${err}`)));
  });
  child.kill('SIGKILL');
  await exited;
  return requestId;
}

/** Every file of the workspace's .legion/runs with its bytes. */
function snapshot(dir: string, runId: string, sessionIds: readonly string[]): Map<string, string> {
  const layout = layoutFor(dir);
  const files = [layout.approvals(runId), layout.events(runId), layout.runFile(runId), ...sessionIds.map((id) => layout.sessionFile(runId, id))];
  return new Map(files.map((f) => [f, existsSync(f) ? readFileSync(f, 'utf8') : '<none>']));
}

test('crash (SIGKILL) while the user\'s approval is pending: `legion show` writes nothing; the next start re-offers it and approving finishes the turn', async () => {
  await withTempDir(async (dir) => {
    const requestId = await crashWhilePending(dir, 'worker', 'write it');
    const runId = (await import('node:fs')).readdirSync(join(dir, '.legion', 'runs'))[0]!;
    const sessionId = 'session-user__worker__default';
    const open = await readSessionFile(layoutFor(dir), runId, sessionId);
    assert.equal(open!.messages.at(-1)!.role, 'assistant', 'the crash left the batch open');
    assert.deepEqual(planRepair(open!.messages, new Date().toISOString()).problems, []);

    // `legion show` (no lock, read-only) on the crashed run: output, and not one byte written.
    const before = snapshot(dir, runId, [sessionId]);
    const shown = await runCli(['show', '--session', sessionId], { cwd: dir, appDir: APP_DIR, env: { HOME: dir } });
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /file_write x\.txt/);
    assert.match(shown.stdout, new RegExp(`waiting for approval \\(${requestId}\\)`));
    const listed = await runCli(['show'], { cwd: dir, appDir: APP_DIR, env: { HOME: dir } });
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual(snapshot(dir, runId, [sessionId]), before);

    const second = await startRestartHarness(dir);
    assert.deepEqual(second.core.pendingApprovals().map((p) => p.requestId), [requestId]);
    assert.deepEqual(eventsOf(second.events, 'approval-request').map((e) => e.requestId), [requestId]);
    second.core.resolveApprovals([requestId], 'approved');
    assert.match(await second.core.idle(sessionId), /^wrote it after/);
    assert.equal(readFileSync(join(dir, 'x.txt'), 'utf8'), 'hello');
    assertAllValid(second.core);
    await second.close();
  });
});

test('crash (SIGKILL) while a nested request is pending (user → lead → worker): the chain is rebuilt from disk; approving finishes the worker and the lead', async () => {
  await withTempDir(async (dir) => {
    const requestId = await crashWhilePending(dir, 'lead', 'delegate the write');
    const second = await startRestartHarness(dir);
    assert.deepEqual(second.core.pendingApprovals().map((p) => [p.requestId, p.sessionId]), [[requestId, 'session-lead__worker__default']]);
    second.core.resolveApprovals([requestId], 'approved');
    assert.equal(await second.core.idle('session-user__lead__default'), 'the worker is done');
    assert.equal(readFileSync(join(dir, 'x.txt'), 'utf8'), 'hello');
    assert.deepEqual(second.core.sessions().map((s) => s.id).sort(), ['session-lead__worker__default', 'session-user__lead__default']);
    for (const s of second.core.sessions()) assert.equal(toolUsesOf(second.core.history(s.id).at(-1)!).length, 0, `${s.id} ends with the final answer`);
    assertAllValid(second.core);
    await second.close();
  });
});
