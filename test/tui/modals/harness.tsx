import React from 'react';
import { render } from 'ink-testing-library';
import { App } from '../../../components/App';
import { buildKeymap } from '../../../components/keymap';
import { createTheme } from '../../../components/theme';
import { stateFromCore } from '../../../components/state/from-core';
import { createUiStore, type UiStore } from '../../../components/state/store';
import { ApprovalServicesContext, type ApprovalServices } from '../../../components/modals/approval-services';
import { createHistorySource, type HistorySource } from '../../../components/modals/history-source';
import { watchApprovals } from '../../../components/modals/approval-watch';
import { UndoContext } from '../../../components/modals/undo-context';
import type { UndoService } from '../../../src/checkpoints/undo-service';
import type { PendingApproval, WorkflowCommands } from '../../../src/runtime/core-api';
import type { EventInput } from '../../../src/events/types';
import { NO_WORKFLOWS, createFakeCore, fakeHistory, type FakeCore } from '../../helpers/fake-core';
import { KEYS, SYNC_TIMERS, keyBytes, stripAnsi, tick } from '../../helpers/tui-app';

/**
 * The real App (key routing, modal host, status bar) on the shared fake core, with the
 * issue-7 services provided the way start-tui provides them. `resolveApprovals` is recorded
 * with its options and behaves like the core's: all-or-nothing, refusing unknown or resolved
 * ids, emitting `approval-resolve` for each id it accepts.
 */
export interface ResolveCall {
  readonly ids: readonly string[];
  readonly decision: 'approved' | 'rejected';
  readonly options: { reason?: string; allowForSession?: boolean } | undefined;
}

export interface ModalHarness {
  readonly core: FakeCore;
  readonly store: UiStore;
  readonly resolves: ResolveCall[];
  readonly bells: { count: number };
  frame(): string;
  rawFrame(): string;
  type(text: string): Promise<void>;
  press(...names: string[]): Promise<void>;
  /** Emit events on the core's bus and let the frame update. */
  emit(...events: EventInput[]): Promise<void>;
  unmount(): void;
}

export interface ModalHarnessOptions {
  readonly core?: FakeCore;
  readonly columns?: number;
  readonly rows?: number;
  readonly plain?: boolean;
  readonly keymap?: Record<string, string | string[]>;
  readonly services?: ApprovalServices;
  /** The history browser's source; absent: the fake core's run, live. */
  readonly history?: HistorySource;
  /** The workflows beside the core; absent: none. */
  readonly workflows?: WorkflowCommands;
  readonly bell?: boolean;
  /** Checkpoints and undo (the checkpoints modal); absent: not provided. */
  readonly undo?: UndoService;
  /** The UI's clock (ms), shared by the approval watcher and the keys; the test may move it. */
  readonly clock?: { now: number };
}

export function patchResolve(core: FakeCore, resolves: ResolveCall[]): void {
  core.resolveApprovals = (ids, decision, options) => {
    resolves.push({ ids: [...ids], decision, options });
    const pending = new Set(core.pendingApprovals().map((r) => r.requestId));
    const bad = ids.find((id) => !pending.has(id));
    if (bad) return { ok: false, error: `no pending request ${bad}` };
    for (const requestId of ids) {
      core.emit({ type: 'approval-resolve', requestId, decision, decidedBy: 'user', reason: options?.reason ?? `${decision} by user` });
    }
    return { ok: true };
  };
}

export async function renderModals(options: ModalHarnessOptions = {}): Promise<ModalHarness> {
  const core = options.core ?? createFakeCore();
  const resolves: ResolveCall[] = [];
  patchResolve(core, resolves);
  const keymap = buildKeymap(options.keymap ?? {});
  if (!keymap.ok) throw new Error(keymap.error);
  const theme = createTheme({ color: true, plain: options.plain ?? false });
  const store = createUiStore({ core, initial: stateFromCore(core, { maxLanes: 4, autoOpenLanes: true }, false), frameMs: 0, timers: SYNC_TIMERS });
  if (!core.sessions().some((s) => s.initiatorId === 'user')) {
    const opened = core.openSession('ur-agent');
    if (opened.ok) store.dispatch({ type: 'show-session', sessionId: opened.sessionId });
  }
  const bells = { count: 0 };
  const clock = options.clock ?? { now: 0 };
  const unwatch = watchApprovals({ bus: core.bus, store, bell: options.bell ?? true, ring: () => { bells.count += 1; }, now: () => clock.now });
  const history = options.history ?? createHistorySource({ runId: core.runId, history: fakeHistory(core) });
  let tree = <App core={core} history={history} workflows={options.workflows ?? NO_WORKFLOWS} store={store} keymap={keymap.keymap} theme={theme} providerLabel="faux test" demo={false} onQuit={() => undefined} now={() => clock.now} />;
  if (options.services) tree = <ApprovalServicesContext.Provider value={options.services}>{tree}</ApprovalServicesContext.Provider>;
  if (options.undo) tree = <UndoContext.Provider value={options.undo}>{tree}</UndoContext.Provider>;
  const ui = render(tree);
  const stdout = ui.stdout as unknown as NodeJS.EventEmitter & { columns: number; rows: number };
  Object.defineProperty(stdout, 'columns', { value: options.columns ?? 120, configurable: true });
  Object.defineProperty(stdout, 'rows', { value: options.rows ?? 32, configurable: true });
  await tick(5);
  stdout.emit('resize');
  await tick(5);
  const write = async (bytes: string): Promise<void> => {
    ui.stdin.write(bytes);
    await tick();
    await tick();
  };
  return {
    core, store, resolves, bells,
    frame: () => stripAnsi(ui.lastFrame() ?? ''),
    rawFrame: () => ui.lastFrame() ?? '',
    type: (text) => write(text),
    async press(...names) { for (const n of names) await write(n === 'space' ? ' ' : keyBytes(n)); },
    async emit(...events) { for (const e of events) core.emit(e); await tick(); await tick(); },
    unmount: () => { unwatch(); ui.unmount(); ui.cleanup(); store.dispose(); },
  };
}

export { KEYS, tick };

let seq = 0;
/** An `approval-request` event body (chain ends with the asking agent). */
export function request(fields: Partial<Omit<PendingApproval, 'at'>> & { requestId: string }): EventInput {
  const participantId = fields.participantId ?? 'scribe';
  return {
    type: 'approval-request',
    requestId: fields.requestId,
    sessionId: fields.sessionId ?? `session-ur-agent__${participantId}__notes`,
    participantId,
    chain: [...(fields.chain ?? ['user', 'ur-agent', participantId])],
    toolUseId: fields.toolUseId ?? `tu-${++seq}`,
    toolName: fields.toolName ?? 'file_write',
    input: fields.input ?? { path: `notes/${fields.requestId}.md`, content: 'x' },
    ruleId: fields.ruleId === undefined ? 'writes-ask' : fields.ruleId,
    approverId: fields.approverId ?? 'user',
    ...('reason' in fields ? (fields.reason !== undefined ? { reason: fields.reason } : {}) : { reason: 'Writes need approval' }),
  };
}
