import { randomUUID } from 'node:crypto';
import { connect, type ClientHttp2Session } from 'node:http2';
import { messageOf } from '../errors';
import type { EventInput } from '../events/types';
import type { TurnOutcome } from '../runtime/turn';
import { listDeployments } from './admin';
import { requestText } from './http-text';
import { EVENTS_PATH, type FeedLine } from './event-feed';
import { readFeedLine } from './feed-line';
import { createLineReader } from '../serve/line-reader';
import { MAX_SERVER_LINE_BYTES } from '../serve/protocol';
import { SESSION_OBJECT, TURN_HEADER } from './session-object';
import { turnOutcomeSchema, type TurnInput } from './turn-messages';
import type { PendingApproval } from '../model/approval';
import { requestFeed } from './feed-token';

/**
 * The hub's side of engine mode (docs/engine.md#streaming-and-the-hub): turns go to the
 * engine's ingress; the events of this run come back from every registered worker's feed.
 */
export interface EngineHub {
  /**
   * Send one turn and wait for its outcome (never rejects: a lost engine is a failed turn).
   * `signal` aborting cancels the invocation in the engine (the turn ends interrupted there).
   */
  runTurn(input: TurnInput, sessionId: string, signal?: AbortSignal): Promise<TurnOutcome>;
  /** Requests for the user raised on workers, still pending as far as the hub has seen. */
  pendingApprovals(): PendingApproval[];
  /** Whether the request waits on a worker (its decision goes to the engine). */
  isRemote(requestId: string): boolean;
  /** Resolve the awakeable the request waits on; false when the engine refused or is gone. */
  decide(requestId: string, decision: RemoteDecision): Promise<{ ok: true } | { ok: false; error: string }>;
  close(): void;
}

/** What a front end decided, as the worker's awakeable receives it. */
export interface RemoteDecision {
  readonly decision: 'approved' | 'rejected';
  readonly reason?: string;
  readonly allowForSession?: boolean;
  readonly by?: string;
}

export interface HubOptions {
  readonly ingress: string;
  readonly admin: string;
  readonly runId: string;
  /** What the workers' feeds ask a hub to show (feed-token.ts: the workspace's token). */
  readonly feedToken: string;
  /** An event of this run from a worker (its stamp removed; the hub's bus stamps it). */
  onEvent(event: EventInput): void;
  log?(line: string): void;
  /** A request for the user that waits on a worker arrived (a headless hub decides it at once). */
  onRemoteRequest?(requestId: string): void;
  /**
   * How often the hub looks for workers it does not follow yet while it is not following every
   * worker the engine lists: none followed yet, one whose feed could not be opened, or a feed
   * lost since the last look (a worker killed or restarted; default 250 ms).
   */
  readonly pollMs?: number;
  /**
   * How often it looks once it follows every listed worker (default 1 s): only a worker newly
   * registered at a new URL is found this way (each turn the hub sends also looks at once).
   */
  readonly settledPollMs?: number;
  /** The longest feed line taken (default MAX_SERVER_LINE_BYTES, what a front end takes from the server); a longer one is refused. */
  readonly maxFeedLineBytes?: number;
}

/** Refused feed lines logged per feed (a hostile worker could write them without end). */
const MAX_REFUSALS_LOGGED = 10;

/** The engine's answer to a turn sent to the ingress, as the turn's outcome. */
function outcomeOf(answer: { status: number; text: string }): TurnOutcome {
  if (answer.status === 404) return { kind: 'failed', error: `no worker registered ${SESSION_OBJECT} with the engine: start one with legion worker (or legion engine up)` };
  if (answer.status < 200 || answer.status >= 300) {
    const why = (() => { try { return String((JSON.parse(answer.text) as { message?: unknown }).message ?? answer.text); } catch { return answer.text; } })();
    return { kind: 'failed', error: `the engine ended the turn: ${why.split('\n')[0]!.slice(0, 500)}` };
  }
  const parsed = turnOutcomeSchema.safeParse((() => { try { return JSON.parse(answer.text) as unknown; } catch { return undefined; } })());
  return parsed.success ? parsed.data : { kind: 'failed', error: 'the engine answered something that is not a turn outcome' };
}

export function startEngineHub(options: HubOptions): EngineHub {
  const followed = new Map<string, ClientHttp2Session>();
  let closed = false;
  const pending = new Map<string, PendingApproval>();
  const awakeableOf = new Map<string, string>();

  /** Keep the hub's view of the workers' requests; a request replayed by a new worker replaces the dead attempt's. */
  const invocations = new Map<string, string>();
  // The turns this hub waits on, by the id in their TURN_HEADER: a worker's feed says how each ended.
  const settling = new Map<string, (outcome: TurnOutcome) => void>();
  const take = (line: FeedLine): void => {
    if ('event' in line) return takeEvent(line.event);
    if ('outcome' in line) {
      const parsed = turnOutcomeSchema.safeParse(line.outcome.outcome);
      if (parsed.success) settling.get(line.outcome.turnId)?.(parsed.data);
      return;
    }
    if ('invocation' in line) {
      invocations.set(line.invocation.sessionId, line.invocation.id);
      return;
    }
    if ('awakeable' in line) {
      const { requestId, id } = line.awakeable;
      // A feed followed again writes its waiting requests again: taken once.
      if (awakeableOf.get(requestId) === id) return;
      for (const [older, awakeable] of awakeableOf) {
        if (awakeable !== id || older === requestId) continue;
        awakeableOf.delete(older);
        if (pending.delete(older)) {
          options.onEvent({ type: 'approval-resolve', requestId: older, decision: 'rejected', decidedBy: 'cancel', reason: `asked again as ${requestId} after its worker stopped` });
        }
      }
      awakeableOf.set(requestId, id);
      options.onRemoteRequest?.(requestId);
    }
  };
  const takeEvent = (event: EventInput): void => {
    if (event.type === 'approval-request') {
      if (pending.has(event.requestId)) return;
      const { type: _type, ...request } = event;
      pending.set(event.requestId, { ...request, at: new Date().toISOString() });
    } else if (event.type === 'approval-resolve') {
      pending.delete(event.requestId);
      awakeableOf.delete(event.requestId);
    }
    options.onEvent(event);
  };

  // Whether the hub may not follow every worker the engine lists: it then looks every `pollMs`,
  // otherwise every `settledPollMs` (docs/engine.md#streaming-and-the-hub).
  let unsettled = true;
  const follow = (uri: string): void => {
    const session = connect(uri);
    followed.set(uri, session);
    const forget = (): void => {
      if (followed.get(uri) === session) {
        followed.delete(uri);
        unsettle();
      }
      session.destroy();
    };
    session.on('error', forget);
    session.on('close', forget);
    // The worker proves the workspace's token first (a process squatting its port cannot), then the hub (feed-token.ts).
    let proven = false;
    const stream = requestFeed(session, EVENTS_PATH, options.feedToken, () => { proven = true; }, () => {
      options.log?.(`the worker at ${uri} did not prove it holds the workspace's feed token: its feed is not followed`);
      forget();
    });
    let refused = 0;
    const refuse = (why: string): void => {
      if (refused++ >= MAX_REFUSALS_LOGGED) return;
      options.log?.(`a worker at ${uri} sent a line the hub refused (${why.slice(0, 300)})${refused === MAX_REFUSALS_LOGGED ? '; further refusals on this feed are not logged' : ''}`);
    };
    // Lines as a front end reads the server's: at most MAX_SERVER_LINE_BYTES each (by default) (a longer one is
    // dropped as it arrives, never buffered whole: a feed cannot grow the hub without end).
    const reader = createLineReader({
      maxBytes: options.maxFeedLineBytes ?? MAX_SERVER_LINE_BYTES,
      onOversize: (bytes) => refuse(`a line of ${bytes} bytes`),
      onLine: (line) => {
        if (line.length === 0) return;
        // The feed is a trust boundary: a line is taken only in a shape a worker writes (feed-line.ts).
        const verdict = readFeedLine(line, options.runId);
        if (verdict.kind === 'refused') return refuse(verdict.why);
        if (verdict.kind !== 'line') return;
        try {
          take(verdict.line);
        } catch (error) {
          options.log?.(`a line from the worker at ${uri} failed in the hub (${messageOf(error)}): ignored`);
        }
      },
    });
    stream.on('data', (chunk: Buffer) => { if (proven) reader.push(chunk); });
    stream.on('error', forget);
    stream.on('close', forget);
  };

  const lookOnce = async (): Promise<void> => {
    // A feed lost while the look is under way makes the hub unsettled again.
    unsettled = false;
    const deployments = await listDeployments(options.admin);
    if (closed) return;
    if (!deployments.ok) return unsettle();
    let started = false;
    for (const d of deployments.value) {
      if (d.services.includes(SESSION_OBJECT) && d.uri && !followed.has(d.uri)) {
        follow(d.uri);
        started = true;
      }
    }
    // A feed just asked for may not open (its worker still starting): look again soon.
    if (started || followed.size === 0) unsettle();
  };
  // Look for workers not followed yet. Callers arriving while a look is under way share the next
  // one, started once it ends: each caller's look begins after its call (a worker registered
  // before it is seen), and 20 turns sent at once ask the admin API twice, not 20 times.
  let looking: Promise<void> | undefined;
  let again: Promise<void> | undefined;
  const refresh = (): Promise<void> => {
    if (!looking) {
      looking = lookOnce().finally(() => { looking = undefined; });
      return looking;
    }
    again ??= looking.catch(() => undefined).then(() => {
      again = undefined;
      return refresh();
    });
    return again;
  };
  /** Cancel the session's running invocation through the admin API (it may not be known yet: retried briefly). */
  const cancelInvocation = async (sessionId: string): Promise<void> => {
    for (let tries = 0; tries < 40 && !closed; tries++) {
      const id = invocations.get(sessionId);
      if (id) {
        const url = `${options.admin}/invocations/${encodeURIComponent(id)}/cancel`;
        const sent = await requestText(url, { method: 'PATCH' }, 5000).then((r) => r.status >= 200 && r.status < 300, () => false);
        if (!sent) options.log?.(`could not cancel ${id} at ${url}`);
        return;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const fastMs = options.pollMs ?? 250;
  const settledMs = options.settledPollMs ?? 1000;
  let polling: NodeJS.Timeout | undefined;
  // When the timer set fires (performance.now()), and whether a look runs now.
  let pollAt = 0;
  let polled = false;
  const poll = (): void => {
    const delay = unsettled ? fastMs : settledMs;
    pollAt = performance.now() + delay;
    polling = setTimeout(() => {
      polled = true;
      void refresh().finally(() => {
        polled = false;
        if (!closed) poll();
      });
    }, delay);
    polling.unref();
  };
  /** A feed lost or not open yet: look again within `pollMs`, not after the settled interval. */
  const unsettle = (): void => {
    unsettled = true;
    if (closed || polled || !polling || pollAt - performance.now() <= fastMs) return;
    clearTimeout(polling);
    poll();
  };
  void refresh();
  poll();

  return {
    async runTurn(input, sessionId, signal) {
      // A worker registered since the last poll is followed before the turn's events: waited for
      // only when none is followed yet; otherwise the admin API is asked beside the ingress call
      // (its answer comes in well before a worker's first event), one round trip off every turn.
      if (followed.size === 0) await refresh();
      else void refresh();
      invocations.delete(sessionId);
      const cancel = (): void => void cancelInvocation(sessionId);
      signal?.addEventListener('abort', cancel, { once: true });
      // The outcome comes from whichever says it first: the worker's feed (once every step of the
      // turn is journaled, a few ms before the engine has recorded the end and answered) or the
      // engine's answer (a failure, a worker whose feed this hub does not follow).
      const turnId = randomUUID();
      const settled = new Promise<TurnOutcome>((resolve) => settling.set(turnId, resolve));
      try {
        const answered = requestText(`${options.ingress}/${SESSION_OBJECT}/${encodeURIComponent(sessionId)}/turn`, { method: 'POST', body: JSON.stringify(input), headers: { [TURN_HEADER]: turnId } })
          .then(outcomeOf, (error: unknown): TurnOutcome => ({
            kind: 'failed', error: `the engine at ${options.ingress} was lost (${messageOf(error)}): the turn may go on there; see legion doctor`,
          }));
        const outcome = await Promise.race([answered, settled]);
        return signal?.aborted ? { kind: 'interrupted' } : outcome;
      } finally {
        settling.delete(turnId);
        signal?.removeEventListener('abort', cancel);
      }
    },
    pendingApprovals: () => [...pending.values()].filter((r) => awakeableOf.has(r.requestId)),
    isRemote: (requestId) => awakeableOf.has(requestId),
    async decide(requestId, decision) {
      const id = awakeableOf.get(requestId);
      if (!id) return { ok: false, error: `no pending request ${requestId}` };
      try {
        const answer = await requestText(`${options.ingress}/restate/awakeables/${encodeURIComponent(id)}/resolve`, { method: 'POST', body: JSON.stringify(decision) });
        if (answer.status < 200 || answer.status >= 300) return { ok: false, error: `the engine refused the decision: HTTP ${answer.status} ${answer.text.slice(0, 200)}` };
        return { ok: true };
      } catch (error) {
        return { ok: false, error: `the engine at ${options.ingress} was lost (${messageOf(error)})` };
      }
    },
    close() {
      closed = true;
      if (polling) clearTimeout(polling);
      for (const session of followed.values()) session.destroy();
      followed.clear();
    },
  };
}
