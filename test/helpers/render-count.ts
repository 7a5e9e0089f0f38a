/**
 * Count the renders of chosen components in the Ink apps of a test process, through React's
 * DevTools hook (the one React itself offers for this): on every commit, a function component
 * rendered when its fiber is not the one of the last commit (a parent that did not render
 * leaves it as it was) and carries React's "performed work" flag (a memo that bailed out has
 * it cleared). Call `watchRenders` before the first render.
 */
import reconciler from '../../node_modules/ink/build/reconciler.js';

/** React's fiber flag for a component that ran (`PerformedWork`, the same in React 16–19). */
const PERFORMED_WORK = 1;

interface Fiber { type: unknown; flags: number; child: Fiber | null; sibling: Fiber | null }
type Component = { type?: unknown } | ((...args: never[]) => unknown);

export interface RenderCounts {
  /** Renders of `component` (a `memo(…)` or a plain function component) since the last reset. */
  of(component: Component): number;
  reset(): void;
}

let installed: { counts: Map<unknown, number>; last: Set<Fiber> } | null = null;

export function watchRenders(): RenderCounts {
  if (!installed) {
    const state = { counts: new Map<unknown, number>(), last: new Set<Fiber>() };
    (globalThis as Record<string, unknown>).__REACT_DEVTOOLS_GLOBAL_HOOK__ = {
      supportsFiber: true,
      inject: () => 1,
      checkDCE: () => undefined,
      onScheduleFiberRoot: () => undefined,
      onCommitFiberUnmount: () => undefined,
      onPostCommitFiberRoot: () => undefined,
      onCommitFiberRoot(_id: number, root: { current: Fiber }) {
        const seen = new Set<Fiber>();
        const walk = (fiber: Fiber | null): void => {
          for (let f = fiber; f; f = f.sibling) {
            if (typeof f.type === 'function') {
              seen.add(f);
              if ((f.flags & PERFORMED_WORK) !== 0 && !state.last.has(f)) state.counts.set(f.type, (state.counts.get(f.type) ?? 0) + 1);
            }
            walk(f.child);
          }
        };
        walk(root.current);
        state.last = seen;
      },
    };
    (reconciler as unknown as { injectIntoDevTools(): boolean }).injectIntoDevTools();
    installed = state;
  }
  const state = installed;
  const inner = (c: Component): unknown => (typeof c === 'function' ? c : c.type);
  return {
    of: (component) => state.counts.get(inner(component)) ?? 0,
    reset: () => state.counts.clear(),
  };
}
