import { LegionError, messageOf } from '../errors';
import type { CliIo } from './io';
import type { LegionEvent } from '../events/types';
import type { ServerInfo } from '../serve/discovery';
import { createDeltaCoalescer } from '../events/coalesce';
import { attachServer } from './attach';
import { onAttachedSigint } from './attached-sigint';

export interface AttachedRun {
  readonly to: string;
  readonly name?: string;
  readonly message: string;
  readonly json: boolean;
  readonly coalesce: boolean;
  /** Cuts API keys out of everything printed. */
  readonly clean: (text: string) => string;
  readonly exit: { ok: number; turnFailed: number; incomplete: number; budget: number; interrupted: number };
}

/**
 * `legion run` while a server runs (docs/serve.md#attaching): the message goes to the server's
 * core, the answer (or with --json every event from the moment of attaching) is printed here.
 * Approvals are the server's: they wait in its queue for an attached `legion` to decide (a
 * line on stderr says so). Ctrl+C interrupts the turn on the server; a second one detaches.
 */
export async function runAttached(io: CliIo, server: ServerInfo, run: AttachedRun): Promise<number> {
  const { core } = await attachServer(server, 'run');
  // The server's untrusted-workspace warning, as a local `legion run` prints it (docs/workspace-trust.md).
  if (core.welcome.untrusted) io.stderr(`legion: warning: ${core.welcome.untrusted}\n`);
  let sessionId: string | undefined;
  const print = (event: LegionEvent): void => io.stdout(run.clean(JSON.stringify(event)) + '\n');
  const printer = run.coalesce ? createDeltaCoalescer(print) : { push: print, close: () => undefined };
  const unsubscribe = core.bus.subscribeAll((event) => {
    if (run.json) printer.push(event);
    if (event.type === 'approval-request' && (event.sessionId === sessionId || event.chain[0] === 'user')) {
      io.stderr(`legion: ${event.participantId} waits for approval ${event.requestId} (${event.toolName}): decide it in \`legion\` attached to the server\n`);
    }
  });
  const offSigint = onAttachedSigint(io.stderr, {
    interrupt: () => { if (sessionId) core.cancel(sessionId); },
    detach: () => void core.shutdown('detach'),
    code: run.exit.interrupted,
  });
  try {
    const sent = core.send(run.to, run.message, run.name);
    if (!sent.ok) throw new LegionError(run.clean(sent.error));
    sessionId = sent.sessionId;
    let text: string;
    try {
      text = await core.idle(sessionId);
    } catch (error) {
      throw new LegionError(`the Legion server went away: ${messageOf(error)}`);
    }
    const outcome = await core.lastOutcome(sessionId);
    if (!outcome || outcome.kind === 'interrupted') {
      io.stderr('legion: interrupted\n');
      return run.exit.interrupted;
    }
    if (outcome.kind === 'failed') {
      io.stderr(`legion: ${run.to}: ${run.clean(outcome.error.split('\n', 1)[0]!)}\n`);
      return outcome.error.startsWith('budget reached') ? run.exit.budget : run.exit.turnFailed;
    }
    if (!run.json) io.stdout(run.clean(text.endsWith('\n') || text === '' ? text : `${text}\n`));
    if (outcome.incomplete) {
      io.stderr(`legion: ${run.clean(outcome.incomplete)}\n`);
      return run.exit.incomplete;
    }
    return run.exit.ok;
  } finally {
    offSigint();
    printer.close();
    unsubscribe();
    await core.shutdown('detach');
  }
}
