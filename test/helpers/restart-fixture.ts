import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAppHarness, type Harness, type RuleTable } from './app-harness';

/**
 * Pending approvals across a restart (issue 5): a worker whose batch is a read the rules
 * allow plus a write they ask for; a lead that delegates the same write to the worker.
 * Used in-process (restart-approvals.test.ts) and by a child process killed with SIGKILL
 * (restart-approvals-child.ts).
 */
export const RESTART_SCRIPT = `
replies:
  - { agent: worker, when: "write it", toolCalls: [{ name: file_read, input: { path: seed.txt } }, { name: file_write, input: { path: x.txt, content: hello } }] }
  - { agent: worker, on: tool-error, text: "could not: {{lastText}}" }
  - { agent: worker, on: tool-result, text: "wrote it after {{lastText}}" }
  - { agent: lead, when: "delegate", toolCalls: [{ name: communicator, input: { targetId: worker, message: "write it" } }] }
  - { agent: lead, on: tool-error, text: "the worker failed: {{lastText}}" }
  - { agent: lead, on: tool-result, text: "the worker is done" }
`;

export const RESTART_AGENTS = [
  { id: 'worker', tools: ['file_read', 'file_write'] },
  { id: 'lead', tools: ['communicator'] },
];

/** `.legion/rules.yaml`: writes ask (everything else allowed). */
export const RESTART_RULES: RuleTable = { file_write: 'ask' };

/** A harness over `dir` with the agents, the script and the rules above (seed.txt written). */
export function startRestartHarness(dir: string, extra: { headless?: { approve: 'deny' | 'all' } } = {}): Promise<Harness> {
  writeFileSync(join(dir, 'seed.txt'), 'seed text\n');
  return startAppHarness({ dir, agents: RESTART_AGENTS, script: RESTART_SCRIPT, rules: RESTART_RULES, ...extra });
}
