import { textOf, toolUsesOf } from '../model/message';
import { limitOf } from '../context/budget';
import { messageOf } from '../errors';
import type { EventBodies } from '../events/types';
import type { ResolvedStep } from './schema';
import type { StepStatus, WorkflowProgress } from './progress';
import { isolationOf, nextMoves } from './graph';
import { renderTemplate } from './template';
import type { Emit, RequestBudget, StepPort, StepTurnOutcome } from './ports';

export interface WorkflowRunDeps {
  readonly port: StepPort;
  readonly emit: Emit;
  /** Calls `listener` for each `usage` event until the returned function is called. */
  onUsage(listener: (event: EventBodies['usage']) => void): () => void;
  save(progress: WorkflowProgress): Promise<void>;
  readonly requestBudget: RequestBudget;
  /** `budgets.raiseBy`: an approved request raises the limit by this many times `budgetUsd`. */
  readonly raiseBy: number;
  now(): string;
}

export interface WorkflowRun {
  readonly workflowId: string;
  readonly name: string;
  /** Settles when no step runs any more (or Legion stops); the final progress. */
  readonly done: Promise<WorkflowProgress>;
  /** Cancel every running step; steps not started are skipped. False when the workflow already ended. */
  cancel(): boolean;
  /**
   * Legion shuts down: stop here without recording anything more, so the turns the shutdown
   * cuts short stay `running` on disk and the next start resumes them. Settles `done`.
   */
  halt(): void;
}

/** Text sent to a step whose turn a restart cut short, after its prompt is already in the session. */
export const RESUME_TEXT = '(Legion restarted while you worked on this workflow step. Continue where you left off and end with your final answer.)';

/**
 * Run (or resume) one workflow (docs/workflows.md, "Execution"): each step is a user turn in its
 * own session; a step starts once its `after` steps are done, so independent steps run at once;
 * a failed or cancelled step skips only its dependants; before a step starts, a reached
 * `budgetUsd` raises a budget request and no step starts until it is decided. Every change is
 * saved (atomic) before it is announced, so a restart skips finished steps.
 */
export function startWorkflowRun(progress: WorkflowProgress, plan: readonly ResolvedStep[], deps: WorkflowRunDeps, options: { resumed: boolean }): WorkflowRun {
  const { port } = deps;
  const p = progress;
  const controller = new AbortController();
  let cancelled = false;
  let halted = false;
  let budgetStop: string | null = null;
  let pumping = false;
  let pumpAgain = false;
  let saving = Promise.resolve();
  const running = new Map<string, Promise<void>>();
  const bySession = new Map<string, string>();
  let finish!: (value: WorkflowProgress) => void;
  const done = new Promise<WorkflowProgress>((resolve) => (finish = resolve));
  const base = { workflowId: p.workflowId, name: p.name };

  // Saves run one after another, so the file always holds the latest state.
  const save = (): Promise<void> => {
    const snapshot = structuredClone(p);
    saving = saving.then(() => deps.save(snapshot)).catch((error: unknown) => {
      deps.emit({ type: 'notice', level: 'warn', message: `workflow ${p.name}: could not save its progress: ${messageOf(error)}` });
    });
    return saving;
  };
  const status = (id: string): StepStatus => p.steps[id]!.status;
  const outputs = (): Record<string, string> => Object.fromEntries(Object.entries(p.steps).flatMap(([id, s]) => (s.output !== undefined ? [[id, s.output]] : [])));

  const stopUsage = deps.onUsage((event) => {
    const id = bySession.get(event.sessionId);
    if (id === undefined || event.costUsd === null) return;
    p.steps[id]!.costUsd += event.costUsd;
    p.spentUsd += event.costUsd;
    void save();
  });

  const endStep = async (id: string, end: 'done' | 'failed' | 'cancelled' | 'skipped', detail: { output?: string; error?: string }): Promise<void> => {
    const step = p.steps[id]!;
    step.status = end;
    step.endedAt = deps.now();
    if (detail.output !== undefined) step.output = detail.output;
    if (detail.error !== undefined) step.error = detail.error;
    await save();
    deps.emit({ type: 'workflow-step-end', ...base, stepId: id, sessionId: step.sessionId, status: end, costUsd: step.costUsd, ...(detail.error ? { error: detail.error } : {}) });
  };

  /** The answer after the step's prompt, when the session ends on one (a finished turn). */
  const finalAnswer = (sessionId: string, startIndex: number): string | null => {
    const messages = port.history(sessionId);
    const last = messages[messages.length - 1];
    if (messages.length <= startIndex + 1 || !last || last.role !== 'assistant' || toolUsesOf(last).length > 0) return null;
    const text = textOf(last);
    return text ? text : null;
  };

  const judge = async (id: string, outcome: StepTurnOutcome | undefined, text: string): Promise<void> => {
    if (halted) return; // stays `running`: the next start resumes it
    const step = p.steps[id]!;
    if (!outcome) {
      const answer = finalAnswer(step.sessionId, step.startIndex ?? 0);
      if (answer !== null) return endStep(id, 'done', { output: answer });
      return endStep(id, cancelled ? 'cancelled' : 'failed', { error: cancelled ? 'cancelled' : 'the step\'s turn ended without an answer' });
    }
    // An isolated step's output ends with what became of its work (docs/worktrees.md): merged, rejected, conflict.
    if (outcome.kind === 'done' && outcome.merge) text = `${text}\n\n[worktree] ${outcome.merge}`;
    if (outcome.kind === 'done' && !outcome.incomplete) return endStep(id, 'done', { output: text });
    if (outcome.kind === 'done') return endStep(id, 'failed', { error: outcome.incomplete!, output: text });
    if (outcome.kind === 'failed') return endStep(id, 'failed', { error: outcome.error.split('\n', 1)[0]! });
    return endStep(id, 'cancelled', { error: cancelled ? 'the workflow was cancelled' : 'interrupted' });
  };

  const runStep = (id: string, mode: 'start' | 'resume'): void => {
    const def = plan.find((s) => s.id === id)!;
    const step = p.steps[id]!;
    const work = (async () => {
      bySession.set(step.sessionId, id);
      if (mode === 'start') {
        const opened = port.openSession(def.agent, def.session);
        if (!opened.ok) return endStep(id, 'failed', { error: opened.error });
        step.sessionId = opened.sessionId;
        bySession.set(step.sessionId, id);
        step.status = 'running';
        step.startIndex = port.history(step.sessionId).length;
        step.startedAt = deps.now();
        await save();
        deps.emit({ type: 'workflow-step-start', ...base, stepId: id, agent: def.agent, sessionId: step.sessionId, resumed: false });
        let prompt = renderTemplate(def.prompt, { input: p.input, inputs: p.inputs, outputs: outputs() });
        if (port.isolation) {
          const { mode, defaulted } = isolationOf(plan, id, port.isolation.writes(def.agent), port.isolation.configDefault);
          const prepared = await port.isolation.prepare(step.sessionId, def.agent, mode);
          if (prepared.ok && prepared.note) prompt = `${prepared.note}\n\n${prompt}`;
          // A step isolated only by default runs without isolation where the workspace cannot isolate (not
          // a git repository); any other failure fails the step: it never writes unisolated instead.
          if (!prepared.ok && !(defaulted && prepared.kind === 'no-repository')) return endStep(id, 'failed', { error: prepared.error });
        }
        const sent = port.send(def.agent, prompt, def.session);
        if (!sent.ok) return endStep(id, 'failed', { error: sent.error });
        const text = await port.idle(step.sessionId);
        return judge(id, port.outcome(step.sessionId), text);
      }
      // Resumed after a restart: the core may have resumed its turn (waiting on an approval).
      deps.emit({ type: 'workflow-step-start', ...base, stepId: id, agent: def.agent, sessionId: step.sessionId, resumed: true });
      if (port.isBusy(step.sessionId)) {
        const text = await port.idle(step.sessionId);
        return judge(id, port.outcome(step.sessionId), text);
      }
      const answer = finalAnswer(step.sessionId, step.startIndex ?? 0);
      if (answer !== null) return endStep(id, 'done', { output: answer });
      const promptSent = port.history(step.sessionId).length > (step.startIndex ?? 0);
      const text = promptSent ? RESUME_TEXT : renderTemplate(def.prompt, { input: p.input, inputs: p.inputs, outputs: outputs() });
      const sent = port.send(def.agent, text, def.session);
      if (!sent.ok) return endStep(id, 'failed', { error: sent.error });
      const reply = await port.idle(step.sessionId);
      return judge(id, port.outcome(step.sessionId), reply);
    })()
      .catch((error: unknown) => endStep(id, 'failed', { error: messageOf(error) }))
      .finally(() => {
        running.delete(id);
        void pump();
      });
    running.set(id, work);
  };

  const limit = (): number | null => (p.budgetUsd === undefined ? null : limitOf(p.budgetUsd, deps.raiseBy, p.budgetRaises));

  /** Apply skips, check the budget, start what is ready; end the workflow when nothing runs. */
  const pump = async (): Promise<void> => {
    if (pumping) {
      pumpAgain = true;
      return;
    }
    pumping = true;
    try {
      do {
        pumpAgain = false;
        if (halted) return;
        for (;;) {
          const { ready, skip } = nextMoves(plan, status);
          for (const s of skip) await endStep(s.id, 'skipped', { error: `not run: ${s.because} ${status(s.because) === 'skipped' ? 'was skipped' : status(s.because) === 'cancelled' ? 'was cancelled' : 'failed'}` });
          const stopWhy = cancelled ? 'the workflow was cancelled' : budgetStop;
          if (stopWhy) {
            for (const id of ready) await endStep(id, 'skipped', { error: `not run: ${stopWhy}` });
            if (skip.length === 0 && ready.length === 0) break;
            continue;
          }
          if (ready.length === 0) {
            if (skip.length === 0) break;
            continue;
          }
          const cap = limit();
          if (cap !== null && p.spentUsd >= cap) {
            const first = plan.find((s) => s.id === ready[0])!;
            const decision = await deps.requestBudget({
              ...base, sessionId: p.steps[first.id]!.sessionId, agent: first.agent, spentUsd: p.spentUsd, limit: cap, raiseBy: p.budgetUsd! * deps.raiseBy,
            }, controller.signal);
            if (halted) return;
            if (decision === 'approved' && !cancelled) {
              p.budgetRaises += 1;
              await save();
            } else if (!cancelled) {
              budgetStop = `budget reached: workflow ${p.name} spent $${p.spentUsd.toFixed(4)} of its $${cap.toFixed(2)} budgetUsd`;
              p.error = budgetStop;
            }
            continue;
          }
          for (const id of ready) runStep(id, 'start');
          break;
        }
      } while (pumpAgain);
      if (running.size === 0 && p.status === 'running') await end();
    } finally {
      pumping = false;
    }
  };

  const end = async (): Promise<void> => {
    const list = Object.entries(p.steps);
    const failed = list.filter(([, s]) => s.status === 'failed' || s.status === 'cancelled').map(([id]) => id);
    const skipped = list.filter(([, s]) => s.status === 'skipped').map(([id]) => id);
    p.status = cancelled ? 'cancelled' : budgetStop ? 'budget' : failed.length > 0 ? 'failed' : 'done';
    p.endedAt = deps.now();
    stopUsage();
    await save();
    // The output (a done workflow's): the last step's in file order, as recorded (docs/workflows.md#execution).
    const output = p.status === 'done' ? p.steps[p.plan[p.plan.length - 1]!.id]?.output ?? '' : undefined;
    deps.emit({
      type: 'workflow-end', ...base, status: p.status, spentUsd: p.spentUsd, failed, skipped, ...(p.error ? { error: p.error } : {}), ...(output !== undefined ? { output } : {}),
    });
    finish(p);
  };

  const endedBefore = plan.filter((s) => !['pending', 'running'].includes(status(s.id))).map((s) => s.id);
  deps.emit({
    type: 'workflow-start', ...base, steps: plan.map((s) => s.id), resumed: options.resumed, ...(p.budgetUsd !== undefined ? { budgetUsd: p.budgetUsd } : {}),
    ...(options.resumed ? { ended: endedBefore, spentUsd: p.spentUsd } : {}),
  });
  void (async () => {
    await save();
    for (const step of plan) if (status(step.id) === 'running') runStep(step.id, 'resume');
    await pump();
  })();

  return {
    workflowId: p.workflowId,
    name: p.name,
    done,
    halt() {
      if (halted) return;
      halted = true;
      controller.abort();
      stopUsage();
      finish(p);
    },
    cancel() {
      if (halted || p.status !== 'running') return false;
      if (cancelled) return true;
      cancelled = true;
      controller.abort();
      for (const id of running.keys()) port.cancel(p.steps[id]!.sessionId);
      void pump();
      return true;
    },
  };
}
