import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { restateServerBinary } from '../../src/engine/local-engine';
import { until } from '../helpers/processes';
import { ensureBundle } from '../helpers/bundle';
import { BUILT, killHard, projectionLines, startEngineStack } from '../helpers/engine-fixture';
import { CLI, hasTmux, openApprovalQueue, quitTui, startTmux, withWorkspace, type Tmux } from './modals-support';

const skip = !hasTmux() ? 'tmux is not installed' : restateServerBinary().ok ? false : 'restate-server is not installed for this platform';

/**
 * The user's path in a terminal (docs/engine.md#approvals): with `engine.kind: restate`, a live
 * `legion worker` and `legion serve` (the built bundle), a turn waits on an approval; `legion
 * serve` is killed with SIGKILL and started again; `legion` (the TUI, attached to the new server)
 * shows the request in its queue, and the user decides it there. The turn ends on the worker:
 * approved, the tool ran once; rejected, never; each model call made once.
 */
async function decideInTuiAfterServeRestart(decision: 'approve' | 'reject'): Promise<void> {
  ensureBundle({ e2e: true });
  // withWorkspace: its removal waits for a TUI still closing the run after its tmux server was killed.
  await withWorkspace(async (dir) => {
    const stack = await startEngineStack(dir, { answerChunks: 3, delayMs: 10, toolDecision: 'ask', entry: BUILT });
    let tui: Tmux | undefined;
    try {
      const sender = await stack.attach('sender');
      assert.ok(sender.send('builder', 'build it').ok);
      await until(() => sender.pendingApprovals().length === 1, 'the request raised on the worker', 60_000, 20);

      await killHard(stack.serve);
      await stack.restartServe();
      tui = startTmux([process.execPath, CLI, '--cwd', dir], { ...stack.env, TERM: 'xterm-256color', NO_COLOR: '1' });
      await tui.waitFor(/· attached ·/, 30_000);
      const queue = await openApprovalQueue(tui, /Approval queue · 1 waiting for you/);
      assert.match(queue, /sh tool\.sh/);
      assert.equal(existsSync(join(dir, 'starts.txt')), false, 'the tool ran before it was decided');

      if (decision === 'approve') {
        tui.type('y');
      } else {
        tui.type('n');
        tui.type('not now');
        tui.keys('Enter');
      }
      await tui.waitGone(/Approval queue/, 30_000);
      await tui.waitFor(decision === 'approve' ? /approved shell sh tool\.sh/ : /rejected shell sh tool\.sh/, 30_000);
      await until(() => projectionLines(dir).length === 4, 'the turn ended on the worker', 60_000, 50).catch((error: Error) => {
        // Where the turn stopped (one CI run in many timed out here after the decision showed): the processes' own words.
        const tail = (text: string): string => text.slice(-3000);
        const engineLog = existsSync(join(dir, 'engine.log')) ? readFileSync(join(dir, 'engine.log'), 'utf8') : '(none)';
        throw new Error(
          [
            error.message,
            `model requests: ${JSON.stringify(stack.model.requests.map((r) => [r.last, r.finished]))}; tool started: ${existsSync(join(dir, 'starts.txt'))}`,
            `projection: ${JSON.stringify(projectionLines(dir).map((line) => line.slice(0, 200)))}`,
            `serve: ${tail(stack.serveLog())}`,
            `worker: ${tail(stack.worker.log.join(''))}`,
            `engine: ${tail(engineLog)}`,
            `screen: ${tui?.screen() ?? ''}`,
          ].join('\n'),
        );
      });
      assert.match(projectionLines(dir)[3]!, /piece 2\./);
      if (decision === 'approve') assert.equal(readFileSync(join(dir, 'starts.txt'), 'utf8'), 'started\n', 'the tool ran other than once');
      else assert.equal(existsSync(join(dir, 'starts.txt')), false, 'a rejected tool ran');
      assert.deepEqual(stack.model.requests.map((r) => [r.last, r.finished]), [['user', true], ['tool', true]]);
      await quitTui(tui);
    } finally {
      tui?.kill();
      await stack.close();
    }
  });
}

test('TUI attached to a legion serve restarted with an approval pending on a live worker: y approves it, the tool runs once, the turn ends', { skip, timeout: 240_000 }, async () => {
  await decideInTuiAfterServeRestart('approve');
});

test('TUI attached to a legion serve restarted with an approval pending on a live worker: n rejects it, the tool never runs, the turn ends', { skip, timeout: 240_000 }, async () => {
  await decideInTuiAfterServeRestart('reject');
});
