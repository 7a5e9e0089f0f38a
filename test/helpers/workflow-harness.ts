import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { composeWorkflows } from '../../src/cli/compose-workflows';
import type { WorkflowService } from '../../src/workflows/service';
import type { LegionCore } from '../../src/runtime/core-api';
import type { EventOf } from '../../src/events/types';
import { startHarness, type Harness, type HarnessOptions } from './runtime-harness';

export interface WorkflowHarness extends Harness {
  readonly service: WorkflowService;
  readonly commands: Required<Pick<LegionCore, 'workflows' | 'startWorkflow' | 'cancelWorkflow'>>;
  /** `workflow-*` events so far, in order, as `type:step` strings (`start:a`, `end:a:done`, `workflow-end:failed`). */
  trace(): string[];
  /** Stop the workflows, then the core (a clean shutdown: running steps stay `running` on disk). */
  stop(): Promise<void>;
}

/**
 * The runtime harness plus the workflows of src/cli/compose-workflows.ts (the same wiring as
 * `composeApp`): `workflows` are written to `<dir>/.legion/workflows/<name>.yaml`; no shipped ones.
 */
export async function startWorkflowHarness(options: HarnessOptions & { workflows?: Readonly<Record<string, string>> }): Promise<WorkflowHarness> {
  const dir = options.dir;
  for (const [name, text] of Object.entries(options.workflows ?? {})) {
    await mkdir(join(dir, '.legion', 'workflows'), { recursive: true });
    await writeFile(join(dir, '.legion', 'workflows', `${name}.yaml`), text);
  }
  const h = await startHarness(options);
  const { service, commands } = composeWorkflows({
    core: h.core, bus: h.core.bus, approvals: h.approvals, registry: h.registry, headless: options.headless !== undefined,
    raiseBy: h.config.budgets.raiseBy, appDir: join(dir, 'no-app'), workspaceRoot: dir, runDir: h.layout.runDir(h.core.runId),
  });
  return {
    ...h, service, commands,
    trace: () => h.events.flatMap((e) => {
      if (e.type === 'workflow-step-start') return [`start:${e.stepId}`];
      if (e.type === 'workflow-step-end') return [`end:${e.stepId}:${e.status}`];
      if (e.type === 'workflow-end') return [`workflow-end:${e.status}`];
      return [];
    }),
    stop: async () => {
      service.stop();
      await h.close();
    },
  };
}

export type WorkflowEndEvent = EventOf<'workflow-end'>;
