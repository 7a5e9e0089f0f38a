/**
 * Remote front ends (docs/remote.md): latency of one event from the core's bus to a client of
 * the web page's event stream (SSE over HTTP on loopback), one event at a time, the client
 * reading with fetch in this process. Figures: `sseP95Ms`, `sseMedianMs`.
 */
import { createBus } from '../../src/events/bus';
import { startWeb } from '../../src/remote/web/server';
import type { WebCore } from '../../src/remote/web/api';
import { newWebToken } from '../../src/remote/web/token';
import { stats, type BenchOptions } from './harness';

export async function run(options: BenchOptions): Promise<Record<string, number>> {
  const bus = createBus({ runId: 'bench' });
  const core: WebCore = {
    runId: 'bench', bus, sessions: () => [], history: () => [], pendingApprovals: () => [], participants: () => [],
    resolveApprovals: () => ({ ok: false, error: 'bench' }),
  };
  const token = newWebToken();
  const web = await startWeb({ core, token, port: 0 });
  const samples: number[] = [];
  try {
    const res = await fetch(`http://127.0.0.1:${web.port}/events?token=${token}`);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    const next = async (marker: string): Promise<void> => {
      while (!buffer.includes(marker)) {
        const { value, done } = await reader.read();
        if (done) throw new Error('event stream ended');
        buffer += decoder.decode(value, { stream: true });
      }
      buffer = buffer.slice(buffer.indexOf(marker) + marker.length);
    };
    const count = options.smoke ? 20 : 2000;
    const warmup = options.smoke ? 5 : 200;
    for (let i = 0; i < warmup + count; i++) {
      const marker = `m-${i}-end`;
      const t0 = performance.now();
      bus.emit({ type: 'text-delta', sessionId: 'session-user__ur-agent__default', participantId: 'ur-agent', text: `a streamed chunk of text ${marker}` });
      await next(marker);
      if (i >= warmup) samples.push(performance.now() - t0);
    }
    await reader.cancel();
  } finally {
    await web.close();
  }
  const s = stats(samples);
  options.note?.(`${s.n} text-delta events, one at a time, bus emit → SSE client (fetch) on loopback`);
  return { sseP95Ms: s.p95, sseMedianMs: s.median };
}
