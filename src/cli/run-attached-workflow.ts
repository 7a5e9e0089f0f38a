import { LegionError } from '../errors';
import type { CliIo } from './io';
import type { EventOf, LegionEvent } from '../events/types';
import type { ServerInfo } from '../serve/discovery';
import { attachCore } from './attach';
import type { WorkflowRunExit } from './commands/run-workflow';

export interface AttachedWorkflowRun {
  readonly name: string;
  readonly input: string;
  readonly inputs: Readonly<Record<string, string>>;
  readonly json: boolean;
  /** Cuts API keys out of everything printed. */
  readonly clean: (text: string) => string;
  readonly exit: WorkflowRunExit;
}

type WorkflowEvent = EventOf<'workflow-start'> | EventOf<'workflow-step-start'> | EventOf<'workflow-step-end'> | EventOf<'workflow-end'>;
const isWorkflowEvent = (e: LegionEvent): e is WorkflowEvent =>
  e.type === 'workflow-start' || e.type === 'workflow-step-start' || e.type === 'workflow-step-end' || e.type === 'workflow-end';

/**
 * `legion run --workflow` while a server runs (docs/workflows.md#cli, docs/serve.md#attaching):
 * the server's core starts the workflow; its `workflow-*` events say how it goes; the output is
 * the last step's answer, as in a local run, and so are the stderr lines and exit codes.
 * Approvals (budget requests included) are the server's: they wait for an attached `legion`.
 * Ctrl+C cancels the workflow on the server; a second one detaches.
 */
export async function runAttachedWorkflow(io: Pick<CliIo, 'stdout' | 'stderr'>, server: ServerInfo, run: AttachedWorkflowRun): Promise<number> {
  const core = await attachCore(server, 'run');
  const { clean, exit } = run;
  let workflowId: string | undefined;
  // Events of the workflow may arrive before startWorkflow's answer names it: kept, then filtered.
  const seen: WorkflowEvent[] = [];
  let ended: ((event: EventOf<'workflow-end'>) => void) | undefined;
  const mine = (): WorkflowEvent[] => seen.filter((e) => e.workflowId === workflowId);
  const sessions = (): Set<string> => new Set(mine().flatMap((e) => (e.type === 'workflow-step-start' ? [e.sessionId] : [])));
  const unsubscribe = core.bus.subscribeAll((event) => {
    if (run.json) io.stdout(clean(JSON.stringify(event)) + '\n');
    if (isWorkflowEvent(event)) {
      seen.push(event);
      if (event.type === 'workflow-end' && event.workflowId === workflowId) ended?.(event);
    }
    if (event.type === 'approval-request' && (sessions().has(event.sessionId) || event.chain[0] === 'user')) {
      io.stderr(`legion: ${event.participantId} waits for approval ${event.requestId} (${event.toolName}): decide it in \`legion\` attached to the server\n`);
    }
  });
  let interrupts = 0;
  const onSigint = (): void => {
    interrupts += 1;
    if (interrupts > 1) {
      process.off('SIGINT', onSigint);
      void core.shutdown('detach');
      process.exit(exit.interrupted);
    }
    io.stderr('legion: interrupting… (Ctrl+C again to detach)\n');
    if (workflowId) core.cancelWorkflow(workflowId);
  };
  process.on('SIGINT', onSigint);
  try {
    const started = await core.startWorkflow(run.name, run.input, run.inputs);
    if (!started.ok) throw new LegionError(clean(started.error));
    workflowId = started.workflowId;
    // A Ctrl+C that came while the start was on its way.
    if (interrupts > 0) core.cancelWorkflow(workflowId);
    const already = mine().find((e): e is EventOf<'workflow-end'> => e.type === 'workflow-end');
    const end = already ?? await Promise.race([
      new Promise<EventOf<'workflow-end'>>((resolve) => { ended = resolve; }),
      core.closed.then((reason) => { throw new LegionError(`the Legion server went away: ${reason}`); }),
    ]);
    const events = mine();
    for (const e of events) {
      if (e.type === 'workflow-step-end' && (e.status === 'failed' || e.status === 'cancelled')) io.stderr(`legion: workflow ${end.name}: step ${e.stepId} ${e.status}: ${clean(e.error ?? '')}\n`);
    }
    if (end.skipped.length > 0 && end.status !== 'cancelled') io.stderr(`legion: workflow ${end.name}: not run: ${end.skipped.join(', ')}\n`);
    if (end.status === 'cancelled') {
      io.stderr('legion: interrupted\n');
      return exit.interrupted;
    }
    if (end.status === 'budget') {
      io.stderr(`legion: ${clean(end.error ?? 'budget reached')}\n`);
      return exit.budget;
    }
    if (end.status === 'failed') return exit.turnFailed;
    // The output: the answer of the last step in file order (its session's last turn).
    const start = events.find((e): e is EventOf<'workflow-start'> => e.type === 'workflow-start');
    const lastStep = start?.steps.at(-1);
    const session = events.find((e): e is EventOf<'workflow-step-start'> => e.type === 'workflow-step-start' && e.stepId === lastStep)?.sessionId;
    const outcome = session ? await core.lastOutcome(session) : undefined;
    const output = outcome?.kind === 'done' ? outcome.text : '';
    if (!run.json) io.stdout(clean(output.endsWith('\n') || output === '' ? output : `${output}\n`));
    return exit.ok;
  } finally {
    process.off('SIGINT', onSigint);
    unsubscribe();
    await core.shutdown('detach');
  }
}
