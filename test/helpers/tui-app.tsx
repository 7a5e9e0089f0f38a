import React from 'react';
import { render } from 'ink-testing-library';
import { App } from '../../components/App';
import { buildKeymap } from '../../components/keymap';
import { createTheme } from '../../components/theme';
import { stateFromCore } from '../../components/state/from-core';
import { startState } from '../../components/state/home-lane';
import { createUiStore, type Timers, type UiStore } from '../../components/state/store';
import { NO_WORKFLOWS, createFakeCore, fakeHistory, type FakeCore } from './fake-core';
import { createHistorySource } from '../../components/modals/history-source';
import { watchQuestions } from '../../components/question-watch';
import type { EventInput } from '../../src/events/types';

/** Key names → the bytes a terminal sends. */
export const KEYS: Readonly<Record<string, string>> = {
  enter: '\r', tab: '\t', 'shift+tab': '\x1b[Z', esc: '\x1b', escape: '\x1b', up: '\x1b[A', down: '\x1b[B',
  left: '\x1b[D', right: '\x1b[C', pageup: '\x1b[5~', pagedown: '\x1b[6~', home: '\x1b[H', end: '\x1b[F',
  f1: '\x1bOP', backspace: '\x7f', delete: '\x1b[3~', 'paste-start': '\x1b[200~', 'paste-end': '\x1b[201~',
};

export function keyBytes(name: string): string {
  if (KEYS[name]) return KEYS[name];
  const ctrl = /^ctrl\+([a-z])$/.exec(name);
  if (ctrl) return String.fromCharCode(ctrl[1]!.charCodeAt(0) - 96);
  return name;
}

/** Timers that fire at once: every bus event renders synchronously (tests need no waiting). */
export const SYNC_TIMERS: Timers = {
  now: () => 0,
  setTimeout: (fn) => { fn(); return 0; },
  clearTimeout: () => undefined,
};

export interface AppHarness {
  readonly core: FakeCore;
  readonly store: UiStore;
  /** The last frame without ANSI styling. */
  frame(): string;
  /** The last frame as written (with ANSI). */
  rawFrame(): string;
  /** Emit events on the fake core's bus and let the frame render. */
  emit(...inputs: EventInput[]): Promise<void>;
  /** Type characters (one chunk, like fast typing). */
  type(text: string): Promise<void>;
  /** Press named keys (`enter`, `ctrl+c`, `f1`, …) one after the other. */
  press(...names: string[]): Promise<void>;
  paste(text: string): Promise<void>;
  resize(columns: number, rows: number): Promise<void>;
  quits: number;
  /** Terminal bells rung for questions (`ui.bell`, see `HarnessOptions.bell`). */
  readonly bells: { count: number };
  clock: { now: number };
  unmount(): void;
}

export interface HarnessOptions {
  readonly core?: FakeCore;
  readonly columns?: number;
  readonly rows?: number;
  readonly plain?: boolean;
  readonly color?: boolean;
  readonly keymap?: Record<string, string | string[]>;
  readonly demo?: boolean;
  /** The workspace the welcome names (default: none named). */
  readonly workspaceRoot?: string;
  readonly providerLabel?: string;
  readonly maxLanes?: number;
  readonly autoOpenLanes?: boolean;
  /** Start as run-tui does: the home lane `user → ur-agent · default` first and focused. Default true. */
  readonly openDefault?: boolean;
  /** `ui.bell` for the question watcher, as run-tui installs it. Default true. */
  readonly bell?: boolean;
  /** The status bar's mode word (run-tui passes `attached` or `local`); none by default. */
  readonly mode?: 'attached' | 'local';
}

/** Let React commit and Ink draw: a few rounds of immediates and timers (robust under load). */
export async function tick(ms = 0): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, ms));
  }
}

// eslint-disable-next-line no-control-regex
export const stripAnsi = (s: string): string => s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');

/** Render the real App on a fake core, sized like a terminal, with synchronous frames. */
export async function renderApp(options: HarnessOptions = {}): Promise<AppHarness> {
  const core = options.core ?? createFakeCore();
  const keymap = buildKeymap(options.keymap ?? {});
  if (!keymap.ok) throw new Error(keymap.error);
  const theme = createTheme({ color: options.color ?? true, plain: options.plain ?? false });
  const settings = { maxLanes: options.maxLanes ?? 4, autoOpenLanes: options.autoOpenLanes ?? true };
  const initial = options.openDefault === false ? stateFromCore(core, settings, false) : startState(core, settings, false).state;
  const store = createUiStore({ core, initial, frameMs: 0, timers: SYNC_TIMERS });
  const bells = { count: 0 };
  const unwatch = watchQuestions({ bus: core.bus, store, bell: options.bell ?? true, ring: () => { bells.count += 1; } });
  const clock = { now: 1_000_000 };
  const harness: { quits: number } = { quits: 0 };
  const ui = render(
    <App core={core} history={createHistorySource({ runId: core.runId, history: fakeHistory(core) })} workflows={NO_WORKFLOWS} store={store} keymap={keymap.keymap} theme={theme} providerLabel={options.providerLabel ?? 'faux test-model'}
      demo={options.demo ?? false} {...(options.mode ? { mode: options.mode } : {})} {...(options.workspaceRoot ? { workspaceRoot: options.workspaceRoot } : {})} onQuit={() => { harness.quits += 1; }} now={() => clock.now} />,
  );
  const stdout = ui.stdout as unknown as NodeJS.EventEmitter & { columns: number; rows: number };
  const resize = async (columns: number, rows: number): Promise<void> => {
    Object.defineProperty(stdout, 'columns', { value: columns, configurable: true });
    Object.defineProperty(stdout, 'rows', { value: rows, configurable: true });
    stdout.emit('resize');
    await tick();
  };
  await tick(5); // let effects (resize and store subscriptions) attach
  await resize(options.columns ?? 120, options.rows ?? 40);
  const write = async (bytes: string): Promise<void> => {
    ui.stdin.write(bytes);
    await tick(); // a lone Esc is held by Ink until the next tick
    await tick();
  };
  return {
    core, store, clock, bells,
    get quits() { return harness.quits; },
    frame: () => stripAnsi(ui.lastFrame() ?? ''),
    async emit(...inputs) { for (const input of inputs) core.emit(input); await tick(); },
    rawFrame: () => ui.lastFrame() ?? '',
    type: (text) => write(text),
    async press(...names) { for (const n of names) await write(keyBytes(n)); },
    paste: (text) => write(`${KEYS['paste-start']}${text}${KEYS['paste-end']}`),
    resize,
    unmount: () => { unwatch(); ui.unmount(); ui.cleanup(); store.dispose(); },
  } as AppHarness;
}
