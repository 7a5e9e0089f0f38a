import { z } from 'zod';
import { lazySchema } from '../storage/lazy-schema';

/**
 * Remote front ends and notifications (docs/remote.md). Event names are checked against the
 * event union when notifications start (src/remote/notify), since config sits below events.
 */

const httpUrl = () =>
  z
    .string()
    .url()
    .refine((url) => /^https?:\/\//i.test(url), { message: 'must be an http:// or https:// URL' });

export const NOTIFY_DEFAULTS = { timeoutMs: 5000, retries: 3 } as const;

/** One webhook: `events` are event kinds (`approval-request`, `run-end`, …) POSTed as JSON to `url`. */
export const notifyTargetSchema = lazySchema(() => z.strictObject({
  url: httpUrl(),
  events: z.array(z.string().min(1)).min(1),
  /** Extra request headers (ntfy's `Title`, an `Authorization` for a private endpoint…). */
  headers: z.record(z.string().min(1), z.string()).optional(),
  timeoutMs: z.number().int().min(100).max(120_000).default(NOTIFY_DEFAULTS.timeoutMs),
  retries: z.number().int().min(0).max(10).default(NOTIFY_DEFAULTS.retries),
}));

export const notifySchema = lazySchema(() => z.array(notifyTargetSchema()));

/** `remote.telegram`: the bot token is read from the environment variable named by `tokenEnv`, never from a file. */
export const telegramSchema = lazySchema(() => z.strictObject({
  tokenEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name').default('LEGION_TELEGRAM_TOKEN'),
  chatId: z.union([z.number().int(), z.string().regex(/^-?\d+$/, 'must be a numeric chat id')]).transform((v) => Number(v)),
  /** The Bot API root (default https://api.telegram.org); tests and self-hosted Bot API servers set it. */
  apiRoot: httpUrl().optional(),
}));

export const remoteSchema = lazySchema(() => z.strictObject({
  telegram: telegramSchema().optional(),
}));

export type NotifyTargetConfig = z.infer<ReturnType<typeof notifyTargetSchema>>;
export type TelegramConfig = z.infer<ReturnType<typeof telegramSchema>>;
