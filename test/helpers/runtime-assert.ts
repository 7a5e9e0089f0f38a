import assert from 'node:assert/strict';
import { planRepair } from '../../src/model/repair';
import type { Message } from '../../src/model/message';
import type { LegionEvent } from '../../src/events/types';
import type { Core } from '../../src/runtime/commands';
import { z as zod } from 'zod';
import type { Tool } from '../../src/tools/types';

/** The history invariant (docs/design.md#message-format) holds: nothing to repair, no problem anywhere. */
export function assertValidHistory(messages: readonly Message[], label = 'history'): void {
  const plan = planRepair(messages, new Date().toISOString());
  assert.deepEqual(plan.problems, [], `${label}: ${plan.problems.join('; ')}`);
  assert.deepEqual(plan.append, [], `${label}: open tool_use at the end`);
}

/** Every session of the core has a valid history. */
export function assertAllValid(core: Core): void {
  for (const session of core.sessions()) assertValidHistory(core.history(session.id), session.id);
}

export function eventsOf<T extends LegionEvent['type']>(events: readonly LegionEvent[], type: T): Extract<LegionEvent, { type: T }>[] {
  return events.filter((e): e is Extract<LegionEvent, { type: T }> => e.type === type);
}

export function toolResults(messages: readonly Message[]): { toolUseId: string; content: string; isError?: boolean }[] {
  return messages.flatMap((m) => m.content.filter((b) => b.type === 'tool_result')) as { toolUseId: string; content: string; isError?: boolean }[];
}

/**
 * A tool for tests: waits `ms` (abortable), records how many run at once, returns `label`.
 */
export function probeTool(name = 'probe'): Tool<{ label: string; ms?: number }> & { maxConcurrent: number; calls: string[] } {
  let running = 0;
  const tool = {
    name,
    description: 'test probe',
    schema: zod.strictObject({ label: zod.string(), ms: zod.number().optional() }),
    keyArgument: (input: { label: string }) => input.label,
    maxConcurrent: 0,
    calls: [] as string[],
    async execute(input: { label: string; ms?: number }, context: { signal: AbortSignal }) {
      running += 1;
      tool.maxConcurrent = Math.max(tool.maxConcurrent, running);
      tool.calls.push(input.label);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, input.ms ?? 40);
        context.signal.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
      });
      running -= 1;
      return { content: `probe ${input.label} done` };
    },
  };
  return tool as unknown as Tool<{ label: string; ms?: number }> & { maxConcurrent: number; calls: string[] };
}
