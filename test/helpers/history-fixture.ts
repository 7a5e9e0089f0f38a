import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Message } from '../../src/model/message';
import { layoutFor, type Layout } from '../../src/storage/layout';
import { createRunStore } from '../../src/session/run-store';
import { sessionIdOf } from '../../src/session/ids';
import type { RunRecord } from '../../src/session/types';

/** A run written to disk the way the session store writes it (run.json + one JSONL per session). */
export interface FixtureRun {
  readonly at: Date;
  readonly title?: string;
  readonly sessions: readonly { readonly initiatorId: string; readonly responderId: string; readonly name?: string; readonly messages: readonly Message[] }[];
}

let token = 0;

export async function writeRuns(root: string, runs: readonly FixtureRun[]): Promise<{ layout: Layout; runs: RunRecord[] }> {
  const layout = layoutFor(root);
  const store = createRunStore(layout, () => new Date(), () => `f${++token}`);
  const out: RunRecord[] = [];
  for (const spec of runs) {
    const run = await store.create(spec.at);
    if (spec.title) { run.title = spec.title; await store.save(run); }
    for (const s of spec.sessions) {
      const id = sessionIdOf({ initiatorId: s.initiatorId, responderId: s.responderId, name: s.name ?? 'default' });
      const file = layout.sessionFile(run.id, id);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, s.messages.map((m) => JSON.stringify(m) + '\n').join(''));
    }
    out.push(run);
  }
  return { layout, runs: out };
}

export function msg(role: 'user' | 'assistant', text: string, at = '2026-01-02T10:00:00.000Z'): Message {
  return { role, content: [{ type: 'text', text }], at };
}
