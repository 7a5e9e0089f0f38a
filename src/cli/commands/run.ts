import type { Command } from '../command';
import { LegionError } from '../../errors';
import { UR_AGENT_ID } from '../../collective/participant';
import { REDACTED, secretsFromEnv } from '../../authz/redact';
import type { LegionEvent } from '../../events/types';
import { composeApp } from '../compose';
import { composeRunMessage, cutNote, readPipedInput } from '../piped-input';
import { createDeltaCoalescer } from '../../events/coalesce';
import { attachChoice, serverToAttach } from '../attach';
import { runAttached } from '../run-attached';
import { parseInputFlags, runWorkflow } from './run-workflow';
import { runAttachedWorkflow } from '../run-attached-workflow';
import { withoutTerminalControls } from '../../terminal-text';

/** Exit codes of `legion run` (also in docs/cli.md). */
export const RUN_EXIT = {
  ok: 0,
  /** Configuration, workspace, rules, run lock, unknown participant (LegionError default). */
  failure: 1,
  usage: 2,
  /** The responder's turn failed (provider error: auth, network, rate limit…). */
  turnFailed: 3,
  /** The turn stopped at runtime.maxIterations without a final answer (its last text is printed). */
  incomplete: 4,
  /** A budget was reached (budgets.*, docs/context.md): headless, nobody can raise it. */
  budget: 5,
  /** Interrupted (Ctrl+C). */
  interrupted: 130,
} as const;

export const runCommand: Command = {
  name: 'run',
  usage: 'legion run [--to <id>] [--session <name>] [--json [--coalesce]] [--approve deny|all] [--new | --run <id>] [--attach | --no-attach] <message...> | -\n       legion run --workflow <name> [--input <name>=<value>]... [--json] [--approve deny|all] [--new | --run <id>] <input...>',
  summary: 'send one message headlessly, or run a workflow; print the answer (or every event with --json); piped stdin is attached, or is the message',
  flags: { to: 'value', session: 'value', json: 'boolean', coalesce: 'boolean', approve: 'value', new: 'boolean', run: 'value', attach: 'boolean', 'no-attach': 'boolean', workflow: 'value', input: 'values' },
  async run(context) {
    const { args, io } = context;
    const approve = (args.flags.get('approve') ?? 'deny') as string;
    if (approve !== 'deny' && approve !== 'all') throw new LegionError(`--approve must be deny or all, not "${approve}"`, RUN_EXIT.usage);
    const runFlag = args.flags.get('run');
    if (runFlag !== undefined && args.flags.has('new')) throw new LegionError('--run and --new exclude each other', RUN_EXIT.usage);
    const to = (args.flags.get('to') as string | undefined) ?? UR_AGENT_ID;
    const name = args.flags.get('session') as string | undefined;
    const json = args.flags.has('json');
    // A workflow (docs/workflows.md): its steps choose their agents and sessions.
    const workflow = args.flags.get('workflow') as string | undefined;
    if (workflow !== undefined && (args.flags.has('to') || args.flags.has('session'))) throw new LegionError('--workflow goes without --to and --session (its steps name their agents)', RUN_EXIT.usage);
    if (workflow === undefined && args.flags.has('input')) throw new LegionError('--input goes with --workflow', RUN_EXIT.usage);
    const workflowInputs = parseInputFlags(args.lists?.get('input') ?? []);
    if (args.flags.has('coalesce') && !json) throw new LegionError('--coalesce goes with --json (it joins the text deltas --json prints)', RUN_EXIT.usage);
    // Piped stdin is attached to the message, or is the message (docs/cli-conventions.md); a terminal is never read.
    const piped = io.stdin
      ? await readPipedInput(io.stdin, { onWaiting: () => io.stderr('legion: waiting for piped input on stdin (redirect </dev/null to run without it)\n') })
      : null;
    const message = workflow !== undefined && args.positionals.length === 0 && !piped ? '' : composeRunMessage(args.positionals, piped);
    const cut = piped ? cutNote(piped) : null;
    if (cut) io.stderr(`legion: note: ${cut}\n`);
    const secrets = secretsFromEnv(io.env);
    // API keys never reach stdout/stderr: their literal values are cut from everything printed;
    // nor do a model's escape sequences reach the terminal (src/terminal-text.ts).
    const clean = (text: string): string => {
      let out = withoutTerminalControls(text);
      for (const secret of secrets) if (secret.length >= 6) out = out.split(secret).join(REDACTED);
      return out;
    };

    // A server runs for the workspace: the message goes to it (docs/serve.md#attaching).
    const server = await serverToAttach(context, attachChoice(context));
    if (server) {
      if (args.flags.has('approve')) throw new LegionError('--approve does not apply to an attached run: approvals wait in the server\'s queue (add --no-attach to run here)', RUN_EXIT.usage);
      // The server's core runs the workflow (docs/workflows.md#cli).
      if (workflow !== undefined) return runAttachedWorkflow(io, server, { name: workflow, input: message, inputs: workflowInputs, json, clean, exit: RUN_EXIT });
      return runAttached(io, server, {
        to, ...(name !== undefined ? { name } : {}), message, json, coalesce: args.flags.has('coalesce'), clean,
        exit: { ok: RUN_EXIT.ok, turnFailed: RUN_EXIT.turnFailed, incomplete: RUN_EXIT.incomplete, budget: RUN_EXIT.budget, interrupted: RUN_EXIT.interrupted },
      });
    }

    const rejected: string[] = [];
    // Warnings the core raises while it loads the run (a damaged session line, a torn tail,
    // unreadable approvals): printed like the configuration warnings, one line each.
    const loadWarnings: string[] = [];
    let loading = true;
    let unsubscribe = (): void => undefined;
    let printer: { push(event: LegionEvent): void; close(): void } = { push: () => undefined, close: () => undefined };
    const app = await composeApp(context, {
      headless: { approve },
      onBus: (bus) => {
        // --json prints every event; with --coalesce a session's text deltas within 50 ms are one line.
        const print = (event: LegionEvent): void => io.stdout(clean(JSON.stringify(event)) + '\n');
        printer = args.flags.has('coalesce') ? createDeltaCoalescer(print) : { push: print, flush: () => undefined, close: () => undefined };
        unsubscribe = bus.subscribeAll((event: LegionEvent) => {
          if (json) printer.push(event);
          if (event.type === 'approval-resolve' && event.decidedBy === 'headless' && event.decision === 'rejected') rejected.push(event.requestId);
          if (loading && event.type === 'notice' && event.level !== 'info') loadWarnings.push(event.message);
        });
      },
      ...(typeof runFlag === 'string' ? { runId: runFlag } : {}),
      ...(args.flags.has('new') ? { newRun: true } : {}),
    });
    const { core } = app;
    // The sandbox probe and the checkpoint store (the TUI starts them after its first frame):
    // what they have to say is said with the start warnings.
    await app.settleBackground();
    loading = false;
    for (const warning of app.warnings) io.stderr(`legion: warning: ${clean(warning)}\n`);
    for (const warning of loadWarnings) if (!app.warnings.includes(warning)) io.stderr(`legion: warning: ${clean(warning)}\n`);

    let code: number = RUN_EXIT.ok;
    let sessionId: string | undefined;
    // First Ctrl+C interrupts the turn (histories stay valid, exit 130); a second one kills.
    let interrupts = 0;
    let cancelWorkflow = (): void => undefined;
    const onSigint = (): void => {
      interrupts += 1;
      if (interrupts > 1) {
        process.off('SIGINT', onSigint);
        process.kill(process.pid, 'SIGINT');
        return;
      }
      io.stderr('legion: interrupting… (Ctrl+C again to kill)\n');
      if (sessionId) core.cancel(sessionId);
      cancelWorkflow();
      // Also turns resumed from before a restart (see below).
      for (const session of core.sessions()) core.cancel(session.id);
    };
    process.on('SIGINT', onSigint);
    try {
      // MCP servers start now, in parallel; the message goes out once each is ready or failed.
      app.mcp.start();
      await app.mcp.settled();
      // Workflows a previous Legion left running in this run resume (and finish before it closes).
      await app.resumeWorkflows();
      if (workflow !== undefined) {
        code = await runWorkflow(app, { name: workflow, input: message, inputs: workflowInputs, json, exit: RUN_EXIT, clean }, io, (cancel) => (cancelWorkflow = cancel));
      } else {
        const sent = core.send(to, message, name);
        if (!sent.ok) throw new LegionError(clean(sent.error));
        sessionId = sent.sessionId;
        const text = await core.idle(sessionId);
        const outcome = core.lastOutcome(sessionId);
        if (!outcome || outcome.kind === 'interrupted') {
          io.stderr('legion: interrupted\n');
          code = RUN_EXIT.interrupted;
        } else if (outcome.kind === 'failed') {
          io.stderr(`legion: ${to}: ${clean(outcome.error.split('\n', 1)[0]!)}\n`);
          code = outcome.error.startsWith('budget reached') ? RUN_EXIT.budget : RUN_EXIT.turnFailed;
        } else {
          if (!json) io.stdout(clean(text.endsWith('\n') || text === '' ? text : `${text}\n`));
          if (outcome.incomplete) {
            io.stderr(`legion: ${clean(outcome.incomplete)}\n`);
            code = RUN_EXIT.incomplete;
          }
        }
      }
      // Turns a previous Legion left waiting on approvals resumed at start (their requests decided
      // per --approve); they finish before the run closes, and so do resumed workflows.
      if (code !== RUN_EXIT.interrupted) {
        await Promise.all(app.workflowService.active().map((r) => r.done));
        await Promise.all(core.sessions().map((s) => core.idle(s.id)));
      }
      if (rejected.length > 0) {
        io.stderr(`legion: note: ${rejected.length} action(s) needing approval were rejected (--approve ${approve}): ${rejected.join(', ')}; see .legion/audit/\n`);
      }
    } finally {
      process.off('SIGINT', onSigint);
      await app.close('legion run finished');
      unsubscribe();
      printer.close();
    }
    return code;
  },
};
