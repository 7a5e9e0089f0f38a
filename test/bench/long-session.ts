/**
 * long-session: a run of 10 sessions × 10,000 messages (100,000 in all; markdown text, code
 * blocks and tool calls) resumed into the real App (Ink's throttled renderer on fake TTY
 * streams, production React). Each action is timed from the key (or command) to the frame
 * showing it:
 *  - open: show a 10,000-message session in a lane (every session once, cold);
 *  - scroll: PgUp / PgDn / Home / End in it;
 *  - type: a keystroke in the composer of that lane.
 * Then the process RSS with the 100,000 messages loaded. Budgets: each p95 ≤ 16 ms; RSS ≤ 150 MB.
 */
import type { BenchOptions } from './harness';
import { gc, rssMb, sleep, stats } from './harness';
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

export async function run({ smoke }: BenchOptions): Promise<Record<string, number>> {
  // Before React and Ink load: production React, and Ink not in CI mode (it skips frames there).
  process.env.NODE_ENV = 'production';
  delete process.env.CI;
  const { mountBenchApp } = await import('../helpers/tui-bench');
  const { createFakeCore } = await import('../helpers/fake-core');

  const perSession = smoke ? 500 : 10_000;
  const sessionCount = smoke ? 2 : 10;
  const core = createFakeCore();
  const ids: string[] = [];
  for (let s = 0; s < sessionCount; s++) {
    ids.push(core.seed({ initiatorId: 'user', responderId: 'ur-agent', name: `s${s}` }, history(perSession, s)));
  }
  // One lane: opening a session replaces the lane's session (a cold, never drawn transcript).
  const app = mountBenchApp(core, { columns: 160, rows: 48, maxLanes: 1 });
  try {
    await sleep(300);
    const frame = (): Promise<number> => app.stdout.next().then((t) => t);
    const time = async (act: () => void): Promise<number> => {
      await sleep(25); // past Ink's frame throttle, so the frame is not held back
      const t0 = performance.now();
      const drawn = frame();
      act();
      return (await drawn) - t0;
    };

    // open: every session into the focused lane, cold (never shown before).
    const open: number[] = [];
    for (const id of [...ids.slice(0, -1), ids[ids.length - 1]!]) open.push(await time(() => app.store.dispatch({ type: 'show-session', sessionId: id })));

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
    const rss = rssMb();
    const o = stats(open);
    const sc = stats(scroll);
    const ty = stats(type);
    return {
      openP95Ms: o.p95, openMedianMs: o.median,
      scrollP95Ms: sc.p95, scrollMedianMs: sc.median,
      typeP95Ms: ty.p95, typeMedianMs: ty.median,
      [smoke ? 'rssMbSmoke' : 'rssMb100k']: rss,
      messages: perSession * sessionCount,
    };
  } finally {
    app.unmount();
  }
}
