// Rendering the first screen once while a V8 start-up snapshot is built
// (docs/performance.md#the-start-up-snapshot).
import { PassThrough } from 'node:stream';
import { render } from 'ink';
// Ink's own yoga (its dependency, one copy in node_modules): the object its nodes are created from.
// Were Ink given another copy, the stand-in would not reach it and the build's warm-up would fail.
import Yoga from 'yoga-layout';
import type { LegionConfig } from '../src/config/schema';
import type { Participant } from '../src/collective/participant';
import type { HistoryService, LegionCore, ScreenSession, SessionInfo, WorkflowCommands } from '../src/runtime/core-api';
import { sessionIdOf } from '../src/runtime/core-api';
import { createBus } from '../src/events/bus';
import { EMPTY_TOTALS } from '../src/providers/usage-totals';
import { buildKeymap } from './keymap';
import { createTheme } from './theme';
import { createUiStore, type Timers } from './state/store';
import { createHistorySource } from './modals/history-source';
import { forgetOutputCaches, installInkOutputCache } from './text/ink-output';
import { forgetAnsiBlocks } from './text/AnsiText';
import { forgetLineContexts } from './lanes/Lane';
import { INK_MAX_FPS } from './render-options';
import { frameMsOf, initialState, screenElement, settingsOf } from './run-tui';

/** The terminal the warm-up draws on: the size the benchmarks and most terminals start with. */
const COLUMNS = 120;
const ROWS = 40;

/**
 * Render the screen a start draws first (the home lane of a new run, the demo's notice, the
 * status bar, the composer) once, on a run that exists only here, into a stream that goes
 * nowhere; then unmount it. Run by the snapshot build (bin/legion.ts) after the UI's modules
 * evaluated: V8 keeps the bytecode of functions compiled while a snapshot builds, so a start
 * from it draws its first frame with React's, Ink's and the components' code compiled (a start
 * from a snapshot has no code cache). Resolves, once nothing the render scheduled is left, with
 * what was drawn (the build checks it drew).
 *
 * Nothing of the run may outlive it: the core here reads nothing (no disk, no clock: its bus
 * stamps events at time 0, the store's timers never fire), the store is disposed, Ink unmounts
 * (its exit hook and listeners go), and the streams are never the process's.
 * test/unit/build/warm-render.test.ts checks that a frame drawn after it equals one drawn before
 * and that no handle, listener or timer is left. In a snapshot build there is no WebAssembly, so
 * yoga (Ink's layout) is a stand-in for the render (boxes one above the other, each as wide as
 * its parent), removed afterwards; anywhere else the real yoga lays it out.
 */
export async function warmFirstRender(config: LegionConfig, composed?: WarmRun): Promise<string> {
  const pending = pendingWork();
  const restoreYoga = hasYoga() ? () => undefined : installYogaStandIn();
  const restoreClock = clockAtZero();
  try {
    const drawn = renderOnce(config, composed);
    await settled(pending);
    // Legion's caches keyed by what was drawn. (Ink's own text measures and wraps, keyed by the
    // text itself, keep the few strings of this screen: a start finding one gets the same answer.)
    forgetOutputCaches();
    forgetAnsiBlocks();
    forgetLineContexts();
    return drawn;
  } finally {
    restoreClock();
    restoreYoga();
  }
}

/** Timers and immediates pending in the process (what a render may leave behind). */
const pendingWork = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout' || r === 'Immediate').length;

/**
 * Wait, a turn of the event loop at a time, until what the render scheduled has run (React's
 * scheduler runs the unmount's effects in an immediate; Ink's throttles end on short timers):
 * back to the `before` count of timers and immediates. Throws when the render leaves one for
 * good (a timer or interval no unmount clears), which would otherwise be in the snapshot.
 */
async function settled(before: number): Promise<void> {
  for (let turn = 0; turn < 200; turn++) {
    if (pendingWork() <= before) return;
    await new Promise<void>((resolve) => setTimeout(resolve, 1));
  }
  throw new Error(`warm render: the unmounted screen left timers behind (${process.getActiveResourcesInfo().join(', ')})`);
}

/**
 * Stop the clock (`Date.now`, `performance.now`) at 0 until the render has settled: what React
 * keeps between renders in its modules (the scheduler's work loop start, the time of the last
 * fallback shown) stays at its initial value instead of holding the build's time. Returns the
 * function that puts the clock back.
 */
function clockAtZero(): () => void {
  const clocks = [[Date, 'now'], [performance, 'now']] as const;
  const own = clocks.map(([object, name]) => Object.getOwnPropertyDescriptor(object, name));
  for (const [object, name] of clocks) Object.defineProperty(object, name, { value: () => 0, configurable: true, writable: true });
  return () => {
    clocks.forEach(([object, name], i) => {
      const descriptor = own[i];
      if (descriptor) Object.defineProperty(object, name, descriptor);
      else delete (object as unknown as Record<string, unknown>)[name];
    });
  };
}

/** A run composed for the warm-up (src/cli/warm-compose.ts): what the screen reads of it. */
export type WarmRun = Pick<ScreenSession, 'core' | 'config' | 'providerLabel' | 'demo' | 'runId' | 'resumed' | 'warnings' | 'workflows'>;

function renderOnce(config: LegionConfig, composed: WarmRun | undefined): string {
  const keymap = buildKeymap(config.keymap);
  if (!keymap.ok) throw new Error(`warm render: the shipped keymap does not build: ${keymap.error}`);
  const core = composed?.core ?? standInCore();
  const app: WarmRun = composed ?? {
    core, config, providerLabel: 'demo', demo: true, runId: core.runId, resumed: false,
    warnings: ['no API key found: demo mode (scripted replies)'], workflows: NO_WORKFLOWS,
  };
  const settings = settingsOf(config);
  const store = createUiStore({ core, initial: initialState(app, settings), frameMs: frameMsOf(config), timers: NEVER });
  const history = createHistorySource({ runId: core.runId, history: NO_HISTORY });
  const stdout = terminalStream(true);
  let drawn = '';
  stdout.on('data', (chunk: Buffer) => void (drawn += chunk.toString('utf8')));
  const stdin = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => stdin, ref: () => stdin, unref: () => stdin });
  installInkOutputCache(); // as the screen does before its first render (run-tui.tsx)
  const instance = render(
    screenElement({ app, history, store, keymap: keymap.keymap, theme: createTheme({ color: true, plain: false }), workspaceRoot: '/', onQuit: () => undefined }),
    { stdout: stdout as unknown as NodeJS.WriteStream, stdin: stdin as unknown as NodeJS.ReadStream, stderr: terminalStream(false) as unknown as NodeJS.WriteStream, maxFps: INK_MAX_FPS, exitOnCtrlC: false, patchConsole: false },
  );
  instance.unmount();
  instance.cleanup();
  store.dispose();
  stdin.destroy();
  stdout.destroy();
  return drawn;
}

/**
 * A stream Ink draws on: not a TTY to cli-cursor (which would hook the process's exit for good
 * to show the cursor again), with a terminal's size.
 */
function terminalStream(sized: boolean): PassThrough {
  const stream = new PassThrough();
  return sized ? Object.assign(stream, { columns: COLUMNS, rows: ROWS }) : stream;
}

/** Timers that never fire (the store's frame timer): nothing is left to run after the render. */
const NEVER: Timers = { now: () => 0, setTimeout: () => null, clearTimeout: () => undefined };

const NO_WORKFLOWS: WorkflowCommands = {
  list: async () => [],
  start: async (name) => ({ ok: false, error: `no workflow "${name}"` }),
  cancel: () => false,
};

const NO_HISTORY: HistoryService = {
  runs: async () => [],
  runSessions: async () => [],
  transcript: async () => [],
  searchHistory: async () => ({ hits: [], truncated: false, sessionsSearched: 0 }),
};

const agent = (id: string, name: string): Participant => ({
  id, kind: 'agent', name, description: '', status: 'active', systemPrompt: '', provider: 'default', model: 'default',
  tools: [], toolAuthorizations: {}, approvalAuthority: [],
});

/** A core with the shipped participants and no history, that refuses every command. */
function standInCore(): LegionCore {
  const runId = 'run-warm-render';
  const bus = createBus({ runId, now: () => new Date(0) });
  const participants: Participant[] = [
    { id: 'user', kind: 'user', name: 'You', description: '', status: 'active', approvalAuthority: '*' },
    agent('ur-agent', 'Ur-agent'),
    agent('resource-agent', 'Resource agent'),
  ];
  const sessions: SessionInfo[] = [];
  const refused = { ok: false as const, error: 'the warm-up render runs nothing' };
  return {
    runId,
    bus,
    send: () => refused,
    reply: () => refused,
    usage: () => ({ run: EMPTY_TOTALS, sessions: {} }),
    idle: async () => '',
    openSession(responderId, name = 'default') {
      const id = sessionIdOf({ initiatorId: 'user', responderId, name });
      if (!sessions.some((s) => s.id === id)) {
        sessions.push({ id, initiatorId: 'user', responderId, name, status: 'idle', lastActivity: new Date(0).toISOString(), messageCount: 0 });
        bus.emit({ type: 'session-open', sessionId: id, initiatorId: 'user', responderId, name });
      }
      return { ok: true, sessionId: id };
    },
    resolveApprovals: () => refused,
    cancel: () => undefined,
    participants: () => participants,
    sessions: () => sessions,
    history: () => [],
    contextRecords: () => [],
    compact: async () => refused,
    pendingApprovals: () => [],
    onResync: () => () => undefined,
    onLink: () => () => undefined,
    shutdown: async () => undefined,
  };
}

/** Yoga started (its WebAssembly): always, except while a start-up snapshot builds (scripts/build.mjs). */
const hasYoga = (): boolean => typeof (Yoga as { Node?: unknown }).Node === 'object' || typeof (Yoga as { Node?: unknown }).Node === 'function';

/**
 * Yoga's API as Ink uses it, in JavaScript: every node as wide as its parent's inside (the
 * root: the terminal) unless set, as high as its borders, padding, measured text and children
 * one above the other, all at the origin; other setters record nothing. Installed as the prototype of yoga's (still
 * empty) object, so removing it leaves that object exactly as it was.
 */
function installYogaStandIn(): () => void {
  const target = Yoga as object;
  const before = Object.getPrototypeOf(target) as object | null;
  if (Object.keys(target).length > 0) throw new Error('warm render: yoga is half started');
  const constants = { DISPLAY_FLEX: 0, DISPLAY_NONE: 1, DIRECTION_LTR: 1, ...EDGES };
  const standIn = new Proxy({ Node: { create: () => standInNode() }, ...constants } as Record<string | symbol, unknown>, {
    get: (t, key) => (key in t ? t[key] : typeof key === 'string' && /^[A-Z][A-Z_]+$/.test(key) ? 0 : undefined),
  });
  Object.setPrototypeOf(target, standIn);
  return () => {
    Object.setPrototypeOf(target, before);
  };
}

/** Yoga's edges (its enum's values): borders and padding are kept per edge. */
const EDGES = { EDGE_LEFT: 0, EDGE_TOP: 1, EDGE_RIGHT: 2, EDGE_BOTTOM: 3, EDGE_START: 4, EDGE_END: 5, EDGE_HORIZONTAL: 6, EDGE_VERTICAL: 7, EDGE_ALL: 8 };

interface StandInNode {
  width: number;
  height: number;
  fixedWidth: number | undefined;
  display: number;
  children: StandInNode[];
  border: number[];
  padding: number[];
  measure: ((width: number, mode: number, height: number, heightMode: number) => { width: number; height: number }) | null;
}

/** A side's value of per-edge settings (the edge's own, else its axis', else all). */
const side = (values: readonly number[], edge: number): number => {
  const axis = edge === EDGES.EDGE_LEFT || edge === EDGES.EDGE_RIGHT ? EDGES.EDGE_HORIZONTAL : EDGES.EDGE_VERTICAL;
  return values[edge] ?? values[axis] ?? values[EDGES.EDGE_ALL] ?? 0;
};

function standInNode(): object {
  const node: StandInNode = { width: 0, height: 0, fixedWidth: undefined, display: 0, children: [], border: [], padding: [], measure: null };
  const layout = (n: StandInNode, width: number): void => {
    n.width = n.fixedWidth ?? width;
    const frame = (edge: number): number => side(n.border, edge) + side(n.padding, edge);
    const inner = Math.max(0, n.width - frame(EDGES.EDGE_LEFT) - frame(EDGES.EDGE_RIGHT));
    let height = frame(EDGES.EDGE_TOP) + frame(EDGES.EDGE_BOTTOM);
    if (n.measure) height += n.measure(inner, 2, Number.NaN, 0).height;
    for (const child of n.children) {
      layout(child, inner);
      height += child.height;
    }
    n.height = height;
  };
  const setEdge = (values: number[]) => (edge: number, value: unknown) => void (values[edge] = typeof value === 'number' && Number.isFinite(value) ? value : 0);
  const methods: Record<string, (...args: never[]) => unknown> = {
    insertChild: (child: { __node: StandInNode }, index: number) => void node.children.splice(index, 0, child.__node),
    removeChild: (child: { __node: StandInNode }) => void node.children.splice(node.children.indexOf(child.__node), 1),
    getChildCount: () => node.children.length,
    setMeasureFunc: (measure: StandInNode['measure']) => void (node.measure = measure),
    unsetMeasureFunc: () => void (node.measure = null),
    setWidth: (width: unknown) => void (node.fixedWidth = typeof width === 'number' ? width : undefined),
    setDisplay: (display: number) => void (node.display = display),
    getDisplay: () => node.display,
    calculateLayout: (width: unknown) => layout(node, typeof width === 'number' ? width : node.fixedWidth ?? COLUMNS),
    setBorder: setEdge(node.border),
    setPadding: setEdge(node.padding),
    getComputedBorder: (edge: number) => side(node.border, edge),
    getComputedPadding: (edge: number) => side(node.padding, edge),
    getComputedWidth: () => node.width,
    getComputedHeight: () => node.height,
  };
  const zero = (): number => 0;
  const nothing = (): undefined => undefined;
  return new Proxy({ __node: node }, {
    get: (t, key) => (key === '__node' ? t.__node : typeof key !== 'string' ? undefined : methods[key] ?? (key.startsWith('getComputed') ? zero : nothing)),
  });
}
