/**
 * Child process for the crash-safety suite (test/integration/reliability/crash.test.ts):
 * composes the real app (`composeApp`: config, rules, run lock, stores, ledger, approvals,
 * audit) on a workspace and drives agent turns forever, until the parent kills it with SIGKILL.
 *
 *   node crash-driver.(ts|mjs) <workspace> <appDir> <seed>
 *
 * The workspace's faux script (`CRASH_SCRIPT` in crash-workspace.ts) makes every turn stream text, send a batch
 * of parallel tool calls (a `file_write` the rules ask for → a pending approval, `file_read`s
 * they allow, a `todo_write`, a `modify_agent` rewriting a participant file) and go on for a
 * few batches. The driver answers approval requests after a random delay (approve, reject, or
 * leave pending; requests re-offered after a restart too), cancels a turn now and then, and
 * sends to several agents in parallel.
 * It prints one line `ready <runId>` on stdout once the core runs, then one line per finished turn:
 * `turn <n> <sessionId> <messages in its history> <last message as JSON>` (what the parent
 * checks against the session file after the kill).
 */
import { composeApp } from '../../src/cli/compose';
import type { CommandContext } from '../../src/cli/command';
import type { LegionEvent } from '../../src/events/types';

function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 0x1_0000_0000;
  };
}

async function drive(workspace: string, appDir: string, seed: number): Promise<void> {
  const random = rng(seed);
  const context: CommandContext = {
    args: { command: 'start', positionals: [], flags: new Map(), global: { help: false, version: false, plain: false } },
    io: {
      stdout: (t) => void process.stdout.write(t),
      stderr: (t) => void process.stderr.write(t),
      env: { HOME: workspace, LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: `${workspace}/.legion/crash-script.yaml` },
      cwd: workspace,
      isTTY: false,
    },
    appDir,
    workspaceRoot: workspace,
  };
  let core: Awaited<ReturnType<typeof composeApp>>['core'] | undefined;
  const answer = (requestId: string): void => {
    const roll = random();
    // Some requests are left pending for a while (a kill then finds them open).
    const delay = roll < 0.3 ? 200 + random() * 400 : random() * 20;
    setTimeout(() => {
      const decision = random() < 0.6 ? 'approved' : 'rejected';
      core?.resolveApprovals([requestId], decision, decision === 'rejected' ? { reason: 'not now' } : {});
    }, delay);
  };
  // Subscribed before the core starts: requests re-offered from before a crash are answered too.
  const app = await composeApp(context, {
    onBus: (bus) => void bus.subscribeAll((event: LegionEvent) => {
      if (event.type === 'approval-request' && event.approverId === 'user') answer(event.requestId);
    }),
  });
  core = app.core;
  // Ready as `legion run` is: the sandbox probe and the checkpoint store set up (a new turn waits for them).
  await app.settleBackground();
  process.stdout.write(`ready ${app.runId}\n`);
  let turns = 0;
  const loop = async (agent: string, lane: string): Promise<void> => {
    for (let n = 0; ; n++) {
      const sent = app.core.send(agent, `task ${agent}-${n}`, lane);
      if (!sent.ok) throw new Error(sent.error);
      if (random() < 0.15) setTimeout(() => app.core.cancel(sent.sessionId), random() * 40);
      await app.core.idle(sent.sessionId);
      // Acknowledged: the turn is over, so its messages must be on disk. The parent compares.
      const history = app.core.history(sent.sessionId);
      process.stdout.write(`turn ${++turns} ${sent.sessionId} ${history.length} ${JSON.stringify(history.at(-1) ?? null)}\n`);
    }
  };
  await Promise.all([loop('w1', 'default'), loop('w2', 'default'), loop('w3', 'default'), loop('w1', 'side')]);
}

const [workspace, appDir, seed] = process.argv.slice(2);
if (workspace && appDir) {
  drive(workspace, appDir, Number(seed ?? 1)).catch((error: unknown) => {
    process.stderr.write(`crash-driver: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
}
