/**
 * Mount the real App with Ink's real (throttled, non-debug) renderer on fake TTY streams, for
 * benchmarks: frames are timed when Ink writes them. Import this module dynamically after
 * setting NODE_ENV=production and deleting CI, so React and Ink load in production mode and
 * Ink does not think it runs in CI (where it skips frames).
 */
import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import React from 'react';
import { render } from 'ink';
import { App } from '../../components/App';
import { buildKeymap } from '../../components/keymap';
import { createTheme } from '../../components/theme';
import { stateFromCore } from '../../components/state/from-core';
import { createUiStore, type UiStore } from '../../components/state/store';
import { INK_MAX_FPS } from '../../components/render-options';
import { installInkOutputCache } from '../../components/text/ink-output';
import type { LegionCore } from '../../src/runtime/core-api';
import { NO_WORKFLOWS, fakeHistory } from './fake-core';
import { createHistorySource } from '../../components/modals/history-source';

export class BenchStdout extends EventEmitter {
  readonly isTTY = true;
  columns: number;
  rows: number;
  writes = 0;
  bytes = 0;
  private waiters: ((chunk: string) => boolean)[] = [];
  constructor(columns: number, rows: number) {
    super();
    this.columns = columns;
    this.rows = rows;
  }
  write = (chunk: string): boolean => {
    this.writes += 1;
    this.bytes += chunk.length;
    this.waiters = this.waiters.filter((w) => !w(chunk));
    return true;
  };
  /** Resolve with the time of the first write (after now) that satisfies `match`. */
  next(match: (chunk: string) => boolean = () => true, timeoutMs = 2000): Promise<number> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no frame')), timeoutMs);
      this.waiters.push((chunk) => {
        if (!match(chunk)) return false;
        clearTimeout(timer);
        resolve(performance.now());
        return true;
      });
    });
  }
}

export class BenchStdin extends EventEmitter {
  readonly isTTY = true;
  private queue: string[] = [];
  setEncoding(): void {}
  setRawMode(): void {}
  resume(): void {}
  pause(): void {}
  ref(): void {}
  unref(): void {}
  read = (): string | null => this.queue.shift() ?? null;
  send(bytes: string): void {
    this.queue.push(bytes);
    this.emit('readable');
  }
}

export interface BenchApp {
  readonly store: UiStore;
  readonly stdout: BenchStdout;
  readonly stdin: BenchStdin;
  /** Frames Ink drew and the time its renderer took for them (ms). */
  readonly frames: { count: number; renderMs: number };
  /** Send `bytes` and resolve with ms until a frame satisfying `match` is written. */
  keyToFrame(bytes: string, match?: (chunk: string) => boolean): Promise<number>;
  unmount(): void;
}

export function mountBenchApp(core: LegionCore, options: { columns: number; rows: number; maxFps?: number; maxLanes?: number }): BenchApp {
  installInkOutputCache(); // as run-tui does before its first render
  const keymap = buildKeymap();
  if (!keymap.ok) throw new Error(keymap.error);
  const theme = createTheme({ color: true, plain: false });
  const initial = stateFromCore(core, { maxLanes: options.maxLanes ?? 4, autoOpenLanes: true }, false);
  const store = createUiStore({ core, initial, frameMs: Math.ceil(1000 / (options.maxFps ?? 30)) });
  const stdout = new BenchStdout(options.columns, options.rows);
  const stdin = new BenchStdin();
  const frames = { count: 0, renderMs: 0 };
  const instance = render(
    <App core={core} history={createHistorySource({ runId: core.runId, history: fakeHistory(core) })} workflows={NO_WORKFLOWS} store={store} keymap={keymap.keymap} theme={theme} providerLabel="faux bench" demo={false} onQuit={() => undefined} />,
    {
      stdout: stdout as unknown as NodeJS.WriteStream, stdin: stdin as unknown as NodeJS.ReadStream, stderr: stdout as unknown as NodeJS.WriteStream,
      maxFps: INK_MAX_FPS, exitOnCtrlC: false, patchConsole: false, debug: false,
      onRender: ({ renderTime }) => { frames.count += 1; frames.renderMs += renderTime; },
    },
  );
  return {
    store, stdout, stdin, frames,
    async keyToFrame(bytes, match) {
      const t0 = performance.now();
      const frame = stdout.next(match);
      stdin.send(bytes);
      return (await frame) - t0;
    },
    unmount() {
      instance.unmount();
      store.dispose();
    },
  };
}
