/**
 * context (docs/context.md):
 * 1. The 300-turn session: each turn the agent reads an 8 kB file (faux provider, deterministic,
 *    through the whole core: tools, session files, compaction with summary requests) on a
 *    32k-token window. The provider refuses any request over the window with Anthropic's
 *    "prompt is too long" error (counted as an overflow). Figures: overflows (budget 0), p95
 *    request size as a share of the window (≤ 0.75), and total input tokens sent (summaries
 *    included) as a share of what sending the whole history every call would cost (≤ 0.15).
 * 2. The decision before each provider call (estimate + threshold) in a 10,000-message
 *    session, one message appended per call (≤ 0.2 ms).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { BenchOptions } from './harness';
import { percentile, stats } from './harness';
import { startAppHarness } from '../helpers/app-harness';
import { createFauxProvider, parseFauxScript } from '../../src/providers/faux';
import type { Provider, ProviderEvent, ProviderRequest } from '../../src/providers/types';
import { createContextManager } from '../../src/context/manager';
import type { ContextRecord } from '../../src/context/records';
import type { Message } from '../../src/model/message';

const WINDOW = 32_000;
const SCRIPT = `
replies:
  - { agent: reader, purpose: compaction, repeat: true, text: "SUMMARY: the user asks, turn after turn, to read data.txt; each time the agent read it and answered. Nothing is open." }
  - { agent: reader, on: message, repeat: true, toolCalls: [{ name: file_read, input: { path: data.txt } }] }
  - { agent: reader, on: tool-result, repeat: true, text: "Read it: 8 kB of records, nothing unusual." }
`;

const tokensOf = (request: ProviderRequest): number => Math.ceil((request.system.length + JSON.stringify(request.messages).length) / 4);

/** The faux provider behind a 32k-token window: a longer request gets the vendor's 400. */
function windowedFaux(onRequest: (request: ProviderRequest, tokens: number, refused: boolean) => void): Provider {
  const parsed = parseFauxScript(SCRIPT, 'context-bench.yaml');
  if (!parsed.ok) throw new Error(parsed.error);
  const faux = createFauxProvider({ script: parsed.script });
  return {
    id: 'faux',
    stream(request, signal): AsyncIterable<ProviderEvent> {
      const tokens = tokensOf(request);
      const refused = tokens > WINDOW;
      onRequest(request, tokens, refused);
      if (!refused) return faux.stream(request, signal);
      return (async function* () {
        yield { type: 'error', status: 400, message: `faux: 400 invalid_request_error: prompt is too long: ${tokens} tokens > ${WINDOW} maximum` } as ProviderEvent;
      })();
    },
  };
}

async function longSession(turns: number): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'legion-bench-context-'));
  try {
    const lines: string[] = [];
    for (let i = 0; lines.join('\n').length < 8000; i++) lines.push(`record ${String(i).padStart(4, '0')}: value=${(i * 7919) % 10007} status=${i % 3 === 0 ? 'ok' : 'pending'}`);
    writeFileSync(join(dir, 'data.txt'), lines.join('\n').slice(0, 8000));
    const sizes: number[] = [];
    let overflows = 0;
    let sent = 0;
    let full = 0;
    let fullChars = 0;
    let summaries = 0;
    let system = 0;
    const provider = windowedFaux((request, tokens, refused) => {
      sent += tokens;
      if (request.meta?.purpose === 'compaction') {
        summaries++;
        return;
      }
      system = request.system.length;
      sizes.push(tokens);
      full += Math.ceil((system + fullChars) / 4);
      if (refused) overflows++;
    });
    const h = await startAppHarness({
      dir, provider, agents: [{ id: 'reader', tools: ['file_read'] }],
      config: { context: { defaultWindow: WINDOW }, runtime: { maxIterations: 5 } },
    });
    let sessionId = '';
    const started = performance.now();
    for (let t = 0; t < turns; t++) {
      const before = h.core.history(sessionId).length;
      const result = h.core.send('reader', `turn ${t}: read data.txt again and tell me what changed`);
      if (!result.ok) throw new Error(result.error);
      sessionId = result.sessionId;
      await h.core.idle(sessionId);
      // The full history's size grows by the messages this turn appended (JSON, as a provider is sent them).
      for (const m of h.core.history(sessionId).slice(before)) fullChars += JSON.stringify(m).length + 1;
    }
    const wallMs = performance.now() - started;
    const compactions = h.events.filter((e) => e.type === 'compaction');
    await h.close();
    return {
      turns,
      overflows,
      p95RequestShare: percentile(sizes, 95) / WINDOW,
      maxRequestShare: Math.max(...sizes) / WINDOW,
      inputRatio: sent / full,
      summaryRequests: summaries,
      evictions: compactions.filter((e) => e.type === 'compaction' && e.kind === 'eviction').length,
      summaries: compactions.filter((e) => e.type === 'compaction' && e.kind === 'summary').length,
      wallMs,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Median and p95 time of the decision, one message appended before each, in a session of `size` messages. */
function decisionCost(size: number, calls: number): { medianMicros: number; p95Micros: number; firstMs: number } {
  const messages: Message[] = [];
  const at = new Date(0).toISOString();
  for (let i = 0; i < size; i++) messages.push({ role: i % 2 ? 'assistant' : 'user', content: [{ type: 'text', text: `message ${i} `.repeat(20) }], at });
  const records: ContextRecord[] = [];
  const session = { id: 's', key: { initiatorId: 'user', responderId: 'a', name: 'default' }, messages: () => messages, contextRecords: () => records, appendContext: () => undefined };
  const manager = createContextManager({
    settings: { defaultWindow: 10_000_000, compactAt: 0.6, keepRecent: 0.3, evictToolResultsOver: 4000 },
    windowOf: () => null, emit: () => undefined, notice: () => undefined, now: () => at,
  });
  const tools = [{ name: 'file_read', description: 'read', inputSchema: { type: 'object' } }];
  const request = { session, system: 'You are a.', tools, model: 'm' };
  let t0 = performance.now();
  manager.decide(request); // the first call of a session measures it once (resume, compaction)
  const firstMs = performance.now() - t0;
  const samples: number[] = [];
  for (let i = 0; i < calls; i++) {
    messages.push({ role: i % 2 ? 'assistant' : 'user', content: [{ type: 'text', text: `appended ${i} `.repeat(20) }], at });
    manager.reported('s', 50_000 + i, messages.length - 1);
    t0 = performance.now();
    manager.decide(request);
    samples.push((performance.now() - t0) * 1000);
  }
  const s = stats(samples.slice(Math.floor(calls / 10)));
  return { medianMicros: s.median, p95Micros: s.p95, firstMs };
}

export async function run({ smoke }: BenchOptions): Promise<Record<string, number>> {
  const decision = decisionCost(smoke ? 1000 : 10_000, smoke ? 200 : 2000);
  const session = await longSession(smoke ? 20 : 300);
  return {
    ...session,
    decideMicros10k: decision.medianMicros,
    decideP95Micros10k: decision.p95Micros,
    firstDecideMs10k: decision.firstMs,
  };
}
