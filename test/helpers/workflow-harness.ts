import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowService } from '../../src/workflows/service';
import type { WorkflowCommands } from '../../src/runtime/core-api';
import type { EventOf } from '../../src/events/types';
import { startAppHarness, type AppHarness, type AppHarnessOptions } from './app-harness';

export interface WorkflowHarness extends AppHarness {
  readonly service: WorkflowService;
  /** The workflows beside the core, as composeApp made them (the TUI and `legion serve` call these). */
  readonly commands: WorkflowCommands;
  /** `workflow-*` events so far, in order, as `type:step` strings (`start:a`, `end:a:done`, `workflow-end:failed`). */
  trace(): string[];
  /** composeApp's close: the workflows stop, then the core (a clean shutdown: running steps stay `running` on disk). */
  stop(): Promise<void>;
}

/**
 * The real composition root (startAppHarness over `composeApp`) with workflows: `workflows` are
 * written to `<dir>/.legion/workflows/<name>.yaml` before the start; the shipped ones of
 * config/workflows/ are there too, as for a user.
 */
export async function startWorkflowHarness(options: AppHarnessOptions & { workflows?: Readonly<Record<string, string>> }): Promise<WorkflowHarness> {
  const dir = realpathSync(options.dir);
  for (const [name, text] of Object.entries(options.workflows ?? {})) {
    mkdirSync(join(dir, '.legion', 'workflows'), { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, '.legion', 'workflows', `${name}.yaml`), text, { mode: 0o600 });
  }
  const h = await startAppHarness(options);
  return {
    ...h,
    service: h.workflowService,
    commands: h.workflows,
    trace: () => h.events.flatMap((e) => {
      if (e.type === 'workflow-step-start') return [`start:${e.stepId}`];
      if (e.type === 'workflow-step-end') return [`end:${e.stepId}:${e.status}`];
      if (e.type === 'workflow-end') return [`workflow-end:${e.status}`];
      return [];
    }),
    stop: () => h.close(),
  };
}

export type WorkflowEndEvent = EventOf<'workflow-end'>;
