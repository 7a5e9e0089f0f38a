import { MIN_SECRET_LENGTH, REDACTED } from './redact';

/**
 * Keeps known secret values (the provider API keys of the environment, see
 * `secretsFromEnv`) out of everything Legion stores or emits: histories, the ledger and
 * every event, approvals, allowances, participants, todos, run.json. Only the literal values
 * are replaced (by `[REDACTED]`), never look-alike text: unlike `redact`, a scrubbed history
 * keeps every other byte the model or the user wrote. Tools still run with the real input
 * (a file the model writes on the user's request gets the real content); what is stored of
 * the call is scrubbed. Values shorter than 6 characters are ignored (as in `redact`).
 */
export interface SecretScrubber {
  /** True when there is at least one secret to look for. */
  readonly active: boolean;
  text(text: string): string;
  /**
   * A copy of a JSON value with every string (and object key) scrubbed; the same reference
   * when nothing needed it (no copy on the common path). Non-plain objects pass unchanged.
   */
  value<T>(value: T): T;
  /**
   * For text streamed in chunks (`text-delta`): `push` returns what may be shown now and
   * holds back a tail that could be the start of a secret, so a key split across chunks is
   * never emitted in pieces; `flush` returns what is held at the end of the stream.
   */
  stream(): { push(chunk: string): string; flush(): string };
}

const identity = <T>(value: T): T => value;

export const NO_SECRETS: SecretScrubber = {
  active: false,
  text: identity,
  value: identity,
  stream: () => ({ push: identity, flush: () => '' }),
};

export function createSecretScrubber(values: readonly string[]): SecretScrubber {
  const secrets = [...new Set(values.filter((v) => v.length >= MIN_SECRET_LENGTH))].sort((a, b) => b.length - a.length);
  if (secrets.length === 0) return NO_SECRETS;

  const text = (input: string): string => {
    let out = input;
    for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out;
  };

  const value = <T>(input: T): T => {
    if (typeof input === 'string') return text(input) as T;
    if (Array.isArray(input)) {
      let changed = false;
      const out = input.map((item) => {
        const next = value(item);
        if (next !== item) changed = true;
        return next;
      });
      return (changed ? out : input) as T;
    }
    if (input !== null && typeof input === 'object') {
      const proto = Object.getPrototypeOf(input);
      if (proto !== Object.prototype && proto !== null) return input;
      // The copy is made only once something changed (every event goes through here).
      const entries = Object.entries(input);
      let out: Record<string, unknown> | null = null;
      for (let i = 0; i < entries.length; i++) {
        const [key, item] = entries[i]!;
        const k = text(key);
        const next = value(item);
        if (!out && (k !== key || next !== item)) {
          out = {};
          for (let j = 0; j < i; j++) out[entries[j]![0]] = entries[j]![1];
        }
        if (out) out[k] = next;
      }
      return (out ?? input) as T;
    }
    return input;
  };

  /** Length of the longest tail of `s` that is a proper prefix of a secret. */
  const heldTail = (s: string): number => {
    let hold = 0;
    for (const secret of secrets) {
      for (let k = Math.min(secret.length - 1, s.length); k > hold; k--) {
        if (s.endsWith(secret.slice(0, k))) {
          hold = k;
          break;
        }
      }
    }
    return hold;
  };

  return {
    active: true,
    text,
    value,
    stream() {
      let pending = '';
      return {
        push(chunk) {
          const all = text(pending + chunk);
          const hold = heldTail(all);
          pending = all.slice(all.length - hold);
          return all.slice(0, all.length - hold);
        },
        flush() {
          const rest = pending;
          pending = '';
          return rest;
        },
      };
    },
  };
}
