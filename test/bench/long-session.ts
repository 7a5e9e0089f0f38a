/**
 * long-session: a run of 10 sessions × 10,000 messages (100,000 in all; markdown text, code
 * blocks and tool calls).
 * 1. In process: the real App (Ink's throttled renderer on fake TTY streams, production React)
 *    on a fake core holding the run. Each action is timed from the key (or command) to the
 *    frame showing it: open (show a 10,000-message session in a lane, each session cold, in
 *    three rounds at three terminal widths), scroll (PgUp / PgDn / Home / End in it), type
 *    (a keystroke in its composer).
 * 2. The built CLI resuming the same run from disk (`legion --run <id>`) in tmux: its RSS once
 *    the first frame is up (the core's histories and the UI's, as a user would run it).
 * Budgets: each p95 ≤ 16 ms; RSS ≤ 150 MB.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchOptions } from './harness';
import { appEnv, gc, hasTmux, launchTui, openTmux, prepareWorkspace, rssMb, sleep, stats } from './harness';
import type { Message } from '../../src/model/message';

function history(count: number, seed: number): Message[] {
  const at = new Date(Date.UTC(2026, 0, 1, 0, 0, seed)).toISOString();
  const out: Message[] = [];
  for (let i = 0; out.length < count; i++) {
    out.push({ role: 'user', content: [{ type: 'text', text: `Question ${seed}.${i}: how do we handle item ${i} in the module?` }], at });
    if (i % 5 === 4) {
      const id = `t${seed}-${i}`;
      out.push({ role: 'assistant', content: [{ type: 'text', text: 'Let me look.' }, { type: 'tool_use', id, name: 'file_read', input: { path: `src/m${i}.ts` } }], at });
      out.push({ role: 'user', content: [{ type: 'tool_result', toolUseId: id, content: `export const m${i} = ${i};\n`.repeat(3) }], at });
    }
    out.push({
      role: 'assistant',
      content: [{ type: 'text', text: `## Item ${i}\n\nWe handle **item ${i}** by reading \`m${i}\` first, then:\n\n- check the input\n- write the result\n\n\`\`\`ts\nconst v${i} = read(${i});\n\`\`\`` }],
      at,
    });
  }
  return out.slice(0, count);
}

/** Write the run to `<root>/.legion/runs/<runId>/` the way the session store does. */
function writeRun(root: string, runId: string, sessions: readonly Message[][]): void {
  const dir = join(root, '.legion', 'runs', runId);
  mkdirSync(join(dir, 'sessions'), { recursive: true });
  const at = new Date(Date.UTC(2026, 0, 1)).toISOString();
  writeFileSync(join(dir, 'run.json'), JSON.stringify({ version: 1, id: runId, createdAt: at, updatedAt: at }));
  sessions.forEach((messages, s) => {
    writeFileSync(join(dir, 'sessions', `session-user__ur-agent__s${s}.jsonl`), messages.map((m) => JSON.stringify(m) + '\n').join(''));
  });
}

/** RSS (MB) of the built CLI resuming the run, once its first frame is on screen; NaN without tmux. */
async function appRss(sessions: readonly Message[][], note: BenchOptions['note']): Promise<number> {
  if (!hasTmux()) {
    note?.('tmux is not installed: the app RSS is not measured');
    return NaN;
  }
  const ws = prepareWorkspace();
  const runId = '2026-01-01T00-00-00-bench1';
  writeRun(ws.dir, runId, sessions);
  const pane = openTmux({ width: 120, height: 40, env: appEnv(), cwd: ws.dir });
  try {
    const r = await launchTui(pane, { timeoutMs: 30_000, args: ['--run', runId] });
    if (!r.ok || r.pid === null) {
      note?.(`the app did not start: ${r.ok ? 'no pid' : r.reason}`);
      return NaN;
    }
    await sleep(1500);
    const status = (await import('node:fs')).readFileSync(`/proc/${r.pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024;
  } finally {
    pane.close();
    ws.cleanup();
  }
}

export async function run({ smoke, note }: BenchOptions): Promise<Record<string, number>> {
  // Before React and Ink load: production React, and Ink not in CI mode (it skips frames there).
  process.env.NODE_ENV = 'production';
  delete process.env.CI;
  const { mountBenchApp } = await import('../helpers/tui-bench');
  const { createFakeCore } = await import('../helpers/fake-core');

  const perSession = smoke ? 500 : 10_000;
  const sessionCount = smoke ? 2 : 10;
  const core = createFakeCore();
  const ids: string[] = [];
  const histories = Array.from({ length: sessionCount }, (_, s) => history(perSession, s));
  histories.forEach((h, s) => ids.push(core.seed({ initiatorId: 'user', responderId: 'ur-agent', name: `s${s}` }, h)));
  // One lane: opening a session replaces the lane's session (a cold, never drawn transcript).
  const app = mountBenchApp(core, { columns: 160, rows: 48, maxLanes: 1 });
  try {
    await sleep(300);
    gc(); // the set-up's garbage (100,000 messages built) is not the actions' cost
    const frame = (): Promise<number> => app.stdout.next().then((t) => t);
    const time = async (act: () => void): Promise<number> => {
      await sleep(25); // past Ink's frame throttle, so the frame is not held back
      const t0 = performance.now();
      const drawn = frame();
      act();
      return (await drawn) - t0;
    };

    // open: every session into the lane, cold (never drawn at that width): three rounds at
    // three terminal widths, so each open wraps its visible messages afresh.
    const open: number[] = [];
    await time(() => app.store.dispatch({ type: 'show-session', sessionId: ids[0]! })); // warm-up (JIT)
    for (const [round, columns] of (smoke ? [160] : [160, 150, 140]).entries()) {
      if (round > 0) {
        app.stdout.columns = columns;
        app.stdout.emit('resize');
        await sleep(100);
      }
      for (const id of ids) {
        if (app.store.getState().lanes.includes(id)) continue; // already shown: not an "open"
        open.push(await time(() => app.store.dispatch({ type: 'show-session', sessionId: id })));
      }
    }

    // scroll and type in the focused 10,000-message lane.
    const scroll: number[] = [];
    const keys = ['\x1b[5~', '\x1b[5~', '\x1b[5~', '\x1b[6~', '\x1b[H', '\x1b[6~', '\x1b[6~', '\x1b[F'];
    for (let r = 0; r < (smoke ? 1 : 5); r++) for (const k of keys) scroll.push(await time(() => app.stdin.send(k)));
    const type: number[] = [];
    for (let i = 0; i < (smoke ? 10 : 60); i++) {
      type.push(await time(() => app.stdin.send(i % 30 === 29 ? '\x15' : 'w')));
    }
    gc();
    await sleep(100);
    gc();
    const inProcessRss = rssMb();
    app.unmount();
    const rss = await appRss(histories, note);
    const o = stats(open);
    const sc = stats(scroll);
    const ty = stats(type);
    return {
      openP95Ms: o.p95, openMedianMs: o.median,
      scrollP95Ms: sc.p95, scrollMedianMs: sc.median,
      typeP95Ms: ty.p95, typeMedianMs: ty.median,
      [smoke ? 'rssMbSmoke' : 'rssMb100k']: rss,
      inProcessRssMb: inProcessRss,
      messages: perSession * sessionCount,
    };
  } finally {
    app.unmount();
  }
}
