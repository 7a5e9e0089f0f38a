import type { LegionConfig } from '../config/schema';
import type { EventBus } from '../events/bus';
import { startNotify } from '../remote/notify';

/**
 * The remote front ends that run wherever the core runs (docs/remote.md): notifications
 * (`notify`) today; each is started only when its config asks for it. `close` is called after
 * the core's shutdown, so the `run-end` event still goes out.
 */
export interface RemoteParts {
  close(): Promise<void>;
}

export function startRemoteParts(deps: { readonly config: LegionConfig; readonly bus: EventBus }): RemoteParts {
  const closers: (() => Promise<void>)[] = [];
  if (deps.config.notify.length > 0) closers.push(startNotify({ bus: deps.bus, targets: deps.config.notify }).close);
  return {
    close: async () => {
      await Promise.all(closers.map((close) => close()));
    },
  };
}
