import { randomBytes } from 'node:crypto';
import type { SessionKey } from './types';

/** The time, injected (tests pass a fixed or stepping clock). */
export type Clock = () => Date;
/** A source of short random tokens, `[a-z0-9]+` (tests pass a counter). */
export type IdSource = () => string;

export const systemClock: Clock = () => new Date();

/** Six random base-36 characters. */
export const randomIds: IdSource = () => {
  const bytes = randomBytes(6);
  let out = '';
  for (const b of bytes) out += (b % 36).toString(36);
  return out;
};

export const DEFAULT_SESSION_NAME = 'default';
const SESSION_NAME = /^[a-z0-9][a-z0-9._-]{0,40}$/;
/** Participant ids never contain `_` (see collective/participant.ts), so `__` separates unambiguously. */
const PARTICIPANT_ID = /^[a-z0-9][a-z0-9-]{0,62}$/;
const SESSION_PREFIX = 'session-';

/** `null` when `name` is a valid session name, else why not (one line, for an error result). */
export function checkSessionName(name: string): string | null {
  if (SESSION_NAME.test(name)) return null;
  return `invalid session name "${name}": 1–41 characters of a-z, 0-9, ".", "_" or "-", starting with a letter or digit`;
}

/** `session-{initiatorId}__{responderId}__{name}` (docs/design.md#participants-sessions-runs). Throws on an invalid key (a programming error). */
export function sessionIdOf(key: SessionKey): string {
  if (!PARTICIPANT_ID.test(key.initiatorId)) throw new Error(`sessionIdOf: invalid initiator id "${key.initiatorId}"`);
  if (!PARTICIPANT_ID.test(key.responderId)) throw new Error(`sessionIdOf: invalid responder id "${key.responderId}"`);
  const problem = checkSessionName(key.name);
  if (problem) throw new Error(`sessionIdOf: ${problem}`);
  return `${SESSION_PREFIX}${key.initiatorId}__${key.responderId}__${key.name}`;
}

/** The key of a session id, or `null` when `id` is not one (e.g. a stray file name). */
export function parseSessionId(id: string): SessionKey | null {
  if (!id.startsWith(SESSION_PREFIX)) return null;
  const parts = id.slice(SESSION_PREFIX.length).split('__');
  if (parts.length < 3) return null;
  const [initiatorId, responderId] = parts as [string, string];
  const name = parts.slice(2).join('__');
  if (!PARTICIPANT_ID.test(initiatorId) || !PARTICIPANT_ID.test(responderId) || !SESSION_NAME.test(name)) return null;
  return { initiatorId, responderId, name };
}

/** A run id that sorts by creation time: `2026-11-21T19-30-00-abc123` (UTC). */
export function makeRunId(now: Date, token: string): string {
  if (!/^[a-z0-9]+$/.test(token)) throw new Error(`makeRunId: invalid token "${token}"`);
  return `${now.toISOString().slice(0, 19).replace(/:/g, '-')}-${token}`;
}

/**
 * Whether `id` can name a run folder: no path separators or dot-dot, so a user-supplied
 * id (`legion show <id>`, `--run <id>`) can never address a path outside `runs/`.
 */
export function isSafeRunId(id: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(id) && !id.includes('..');
}
