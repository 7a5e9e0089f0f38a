import { LegionError } from '../errors';
import type { CliIo } from './io';
import { isWorkflowEvent, type EventOf, type WorkflowEvent } from '../events/types';
import type { ServerInfo } from '../serve/discovery';
import { attachServer } from './attach';
import { onAttachedSigint } from './attached-sigint';
import { reportWorkflowEnd, type WorkflowRunExit } from './workflow-end';

export interface AttachedWorkflowRun {
  readonly name: string;
  readonly input: string;
  readonly inputs: Readonly<Record<string, string>>;
  readonly json: boolean;
  /** Cuts API keys out of everything printed. */
  readonly clean: (text: string) => string;
  readonly exit: WorkflowRunExit;
}

/**
 * `legion run --workflow` while a server runs (docs/workflows.md#cli, docs/serve.md#attaching):
 * the server's core starts the workflow; its `workflow-*` events say how it goes; the output is
 * the last step's answer, as in a local run, and so are the stderr lines and exit codes.
 * Approvals (budget requests included) are the server's: they wait for an attached `legion`.
 * Ctrl+C cancels the workflow on the server; a second one detaches.
 */
export async function runAttachedWorkflow(io: Pick<CliIo, 'stdout' | 'stderr'>, server: ServerInfo, run: AttachedWorkflowRun): Promise<number> {
  const { core, workflows } = await attachServer(server, 'run');
  let workflowId: string | undefined;
  // Events of the workflow may arrive before the start's answer names it: kept, then filtered.
  const seen: WorkflowEvent[] = [];
  let ended: ((event: EventOf<'workflow-end'>) => void) | undefined;
  const mine = (): WorkflowEvent[] => seen.filter((e) => e.workflowId === workflowId);
  const sessions = (): Set<string> => new Set(mine().flatMap((e) => (e.type === 'workflow-step-start' ? [e.sessionId] : [])));
  const unsubscribe = core.bus.subscribeAll((event) => {
    if (run.json) io.stdout(run.clean(JSON.stringify(event)) + '\n');
    if (isWorkflowEvent(event)) {
      seen.push(event);
      if (event.type === 'workflow-end' && event.workflowId === workflowId) ended?.(event);
    }
    if (event.type === 'approval-request' && (sessions().has(event.sessionId) || event.chain[0] === 'user')) {
      io.stderr(`legion: ${event.participantId} waits for approval ${event.requestId} (${event.toolName}): decide it in \`legion\` attached to the server\n`);
    }
  });
  let interrupted = false;
  const offSigint = onAttachedSigint(io.stderr, {
    interrupt: () => {
      interrupted = true;
      if (workflowId) workflows.cancel(workflowId);
    },
    detach: () => void core.shutdown('detach'),
    code: run.exit.interrupted,
  });
  try {
    const started = await workflows.start(run.name, run.input, run.inputs);
    if (!started.ok) throw new LegionError(run.clean(started.error));
    workflowId = started.workflowId;
    // A Ctrl+C that came while the start was on its way.
    if (interrupted) workflows.cancel(workflowId);
    const already = mine().find((e): e is EventOf<'workflow-end'> => e.type === 'workflow-end');
    const end = already ?? await Promise.race([
      new Promise<EventOf<'workflow-end'>>((resolve) => { ended = resolve; }),
      core.closed.then((reason) => { throw new LegionError(`the Legion server went away: ${reason}`); }),
    ]);
    // The same report as a local run's; the output is the one the server recorded for the last step.
    return reportWorkflowEnd(io, {
      name: end.name,
      status: end.status,
      ...(end.error !== undefined ? { error: end.error } : {}),
      steps: mine().flatMap((e) => (e.type === 'workflow-step-end' ? [{ id: e.stepId, status: e.status, ...(e.error !== undefined ? { error: e.error } : {}) }] : [])),
      output: end.output ?? '',
    }, run);
  } finally {
    offSigint();
    unsubscribe();
    await core.shutdown('detach');
  }
}
