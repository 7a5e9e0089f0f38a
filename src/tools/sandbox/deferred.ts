import { sandboxNotice, type SandboxSettings, type SandboxState, type ShellSandbox } from './sandbox';
import type { SandboxProbe } from './probe';

/**
 * A shell sandbox whose bubblewrap probe runs when first needed, not at start (docs/sandbox.md,
 * "Start-up"): the probe spawns bwrap twice, which the first frame must not wait for.
 *
 * Contract: `state` is `pending` until the probe answered; `ready()` starts the probe (once)
 * and settles when the real sandbox is in place; `launch` refuses while pending, so no command
 * can ever run unconfined because it came before the probe (the shell tool awaits `ready()`).
 * `start()` is `ready()` for callers that only want the probe under way (after the first frame).
 */
export interface DeferredSandbox extends ShellSandbox {
  /** Probe now (idempotent); resolves to what to say about the outcome, if anything. */
  start(): Promise<{ level: 'info' | 'warn' | 'error'; message: string } | undefined>;
}

export function deferredSandbox(options: {
  readonly settings: SandboxSettings;
  /** Never rejects (probeSandbox reports failures as `unavailable`). Not called when the mode is off. */
  readonly probe: () => Promise<SandboxProbe>;
  /** Build the real sandbox from the probe's answer (createShellSandbox). */
  readonly make: (probe: SandboxProbe | undefined) => ShellSandbox;
}): DeferredSandbox {
  const { settings } = options;
  let inner: ShellSandbox | undefined = settings.mode === 'off' ? options.make(undefined) : undefined;
  let started: ReturnType<DeferredSandbox['start']> | undefined;
  let disposed = false;
  const start: DeferredSandbox['start'] = () => {
    started ??= (async () => {
      if (!inner) {
        const probe = await options.probe().catch((error: unknown): SandboxProbe => ({ kind: 'unavailable', cause: 'bwrap-failed', reason: `the probe failed (${String(error)})` }));
        inner = options.make(probe);
        if (disposed) inner.dispose();
      }
      return sandboxNotice(settings, inner.state);
    })();
    return started;
  };
  const pending: SandboxState = { kind: 'pending' };
  return {
    get state() {
      return inner?.state ?? pending;
    },
    start,
    ready: async () => void (await start()),
    launch(command, workspaceRoot) {
      if (!inner) return { ok: false, error: 'the sandbox is not ready yet; nothing was run' };
      return inner.launch(command, workspaceRoot);
    },
    dispose() {
      disposed = true;
      inner?.dispose();
    },
  };
}
