import type { LegionConfig } from '../config/schema';
import type { LegionCore } from '../runtime/core-api';
import { startNotify } from '../remote/notify';

/**
 * The remote front ends that run wherever the core runs (docs/remote.md): notifications
 * (`notify`) and, with a user to ask (not `legion run`), Telegram approvals
 * (`remote.telegram`); each only when its config asks for it. Nothing here delays the start:
 * grammY is imported in the background. `close` is called after the core's shutdown, so the
 * `run-end` event still goes out.
 */
export interface RemoteParts {
  close(): Promise<void>;
}

export interface RemoteDeps {
  readonly config: LegionConfig;
  readonly core: Pick<LegionCore, 'bus' | 'pendingApprovals' | 'resolveApprovals' | 'sessions' | 'reply'>;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** `legion run`: no user, so no Telegram (its requests are decided by `--approve`). */
  readonly headless: boolean;
  /** A problem of the config the user should see once at start (the composition root's warnings). */
  warn(message: string): void;
  /** The operator's log (`legion serve`): every Telegram update ignored from another chat is a line there. */
  readonly log?: (line: string) => void;
}

export function startRemoteParts(deps: RemoteDeps): RemoteParts {
  const { config, core } = deps;
  const closers: Promise<(() => Promise<void>) | null>[] = [];
  if (config.notify.length > 0) closers.push(Promise.resolve(startNotify({ bus: core.bus, targets: config.notify }).close));
  const telegram = config.remote.telegram;
  if (telegram && !deps.headless) {
    const token = deps.env[telegram.tokenEnv];
    if (!token) {
      deps.warn(`telegram: $${telegram.tokenEnv} is not set; Telegram approvals are off (docs/remote.md)`);
    } else {
      closers.push(
        import('../remote/telegram').then(
          ({ startTelegram }) => startTelegram({ core, token, chatId: telegram.chatId, ...(telegram.apiRoot ? { apiRoot: telegram.apiRoot } : {}), ...(deps.log ? { log: deps.log } : {}) }).close,
          (error: unknown) => {
            core.bus.emit({ type: 'notice', level: 'error', message: `telegram: could not start (${(error as Error).message})` });
            return null;
          },
        ),
      );
    }
  }
  return {
    close: async () => {
      const started = await Promise.all(closers);
      await Promise.all(started.map((close) => close?.()));
    },
  };
}
