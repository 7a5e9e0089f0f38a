import type { Message } from '../model/message';
import type { ContextRecord } from '../context/records';
import { appendJsonl } from '../storage/jsonl';
import type { Layout } from '../storage/layout';
import type { Clock } from './ids';
import { sessionIdOf } from './ids';
import { appendProblem, SessionInvariantError } from './invariant';
import type { SessionHandle, SessionKey, SessionStore } from './types';

/** A session's history as read from disk (already repaired). */
export interface SessionSeed {
  readonly key: SessionKey;
  readonly messages: Message[];
  /** Its compaction and eviction lines (docs/context.md). */
  readonly records?: ContextRecord[];
  /** mtime of the file, used as last activity when the history is empty. */
  readonly fileTime?: string;
}

export interface SessionStoreOptions {
  readonly clock: Clock;
  /** Sessions read from disk, in the order `list()` returns them. The arrays are taken over, not copied. */
  readonly seeds?: readonly SessionSeed[];
  /** Refuse every append (a run opened read-only by `legion show`). */
  readonly readOnly?: boolean;
  /**
   * Appends are kept in memory only: another process writes the files (engine mode's hub, whose
   * workers write the projection; docs/engine.md#streaming-and-the-hub).
   */
  readonly writtenElsewhere?: boolean;
}

/**
 * The sessions of one run over `runs/<runId>/sessions/<sessionId>.jsonl`. Histories live in
 * memory; `append` writes one line synchronously (the file is created on first append) and
 * then adds the message in memory, so a message is in `messages()` only once it is on disk.
 * Appended messages must not be mutated afterwards. The caller holds the run lock.
 */
export function createSessionStore(layout: Layout, runId: string, options: SessionStoreOptions): SessionStore {
  const sessions = new Map<string, SessionHandle>();

  function makeHandle(key: SessionKey, messages: Message[], openedAt: string, records: ContextRecord[] = []): SessionHandle {
    const id = sessionIdOf(key);
    const file = layout.sessionFile(runId, id);
    const frozenKey: SessionKey = Object.freeze({ initiatorId: key.initiatorId, responderId: key.responderId, name: key.name });
    const handle: SessionHandle = {
      id,
      key: frozenKey,
      // A live, read-only view (no copy): it grows with later appends.
      messages: () => messages,
      lastActivity: () => messages[messages.length - 1]?.at ?? openedAt,
      append(message) {
        if (options.readOnly) throw new Error(`${id}: run ${runId} is open read-only`);
        const problem = appendProblem(messages[messages.length - 1], message);
        if (problem) throw new SessionInvariantError(id, problem);
        if (!options.writtenElsewhere) appendJsonl(file, message);
        messages.push(message);
      },
      contextRecords: () => records,
      appendContext(record) {
        if (options.readOnly) throw new Error(`${id}: run ${runId} is open read-only`);
        if (!options.writtenElsewhere) appendJsonl(file, record);
        records.push(record);
      },
    };
    return handle;
  }

  for (const seed of options.seeds ?? []) {
    const handle = makeHandle(seed.key, seed.messages, seed.fileTime ?? options.clock().toISOString(), seed.records);
    sessions.set(handle.id, handle);
  }

  return {
    runId,
    open(key) {
      const id = sessionIdOf(key);
      const existing = sessions.get(id);
      if (existing) return { session: existing, created: false };
      const session = makeHandle(key, [], options.clock().toISOString());
      sessions.set(id, session);
      return { session, created: true };
    },
    get: (sessionId) => sessions.get(sessionId),
    list: () => [...sessions.values()],
  };
}
