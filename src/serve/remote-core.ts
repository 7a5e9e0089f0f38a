import { setTimeout as delay } from 'node:timers/promises';
import type { HistoryService, LegionCore, LinkState, PendingApproval, SendOutcome, SessionInfo, WorkflowCommands } from '../runtime/core-api';
import type { LegionEvent } from '../events/types';
import type { TurnOutcome } from '../runtime/turn';
import type { RunUsage } from '../runtime/usage-book';
import type { Participant } from '../collective/participant';
import { USER_ID } from '../collective/participant';
import { checkSessionName, DEFAULT_SESSION_NAME, sessionIdOf } from '../session/ids';
import { messageOf } from '../errors';
import { connectServer, type CloseKind, type Connection } from './connection';
import { BRIEF, reconnectDelayMs, type ReconnectPolicy } from './reconnect-policy';
import { applyEvent, mirrorFrom, refreshFor, usageOf, type Mirror, type Refresh } from './mirror';
import { createRelayBus, type RelayBus } from './relay-bus';
import { createCaller } from './caller';
import { METHOD_TABLE } from './method-table';
import type { Snapshot } from './snapshot';
import type { Method, ParamsOf } from './method-table';
import type { Welcome } from './protocol';
import { remoteHistory, remoteWorkflows, type RemoteLink } from './remote-services';

/** A `LegionCore` whose core runs in `legion serve` (docs/serve.md). */
export interface RemoteCore extends LegionCore {
  readonly welcome: Welcome;
  /** How the last finished turn of a user session ended (`legion run`), from the server. */
  lastOutcome(sessionId: string): Promise<TurnOutcome | undefined>;
  /** Resolves once the connection ended (bye, the server gone, `shutdown`), with the reason. */
  readonly closed: Promise<string>;
  usage(): RunUsage;
  reply(sessionId: string, text: string): SendOutcome;
}

/** An attached core and the services beside it, each over the same connection: the same interfaces as a local run's. */
export interface RemoteSession {
  readonly core: RemoteCore;
  readonly history: HistoryService;
  readonly workflows: WorkflowCommands;
}

export interface AttachOptions {
  readonly socket: string;
  /** A label for the server's log. */
  readonly client?: string;
  /** How a lost connection is tried again (reconnect-policy.ts): `BRIEF` unless given. */
  readonly reconnect?: ReconnectPolicy;
  /**
   * Checked before every reconnection try: null when the socket is still one this workspace's
   * server could have made, else why not (the try is skipped and the line says so). A long wait
   * gives time to plant one: a private directory under /tmp removed by a cleaner can be made
   * again by another user (docs/serve.md#when-the-server-goes-away).
   */
  readonly checkSocket?: () => string | null;
  /** Waits between tries (tests pass a virtual clock). */
  readonly sleep?: (ms: number) => Promise<void>;
}

/**
 * Attach to a server: hello, snapshot, then every event applied to a local mirror before the
 * front end's subscribers see it (mirror.ts), so the synchronous reads of `LegionCore` answer
 * from memory. Commands go to the server; those `LegionCore` answers synchronously (`send`,
 * `resolveApprovals`…) are checked here against the mirror (the same checks as the core's) and
 * answered at once, and a refusal the server still makes arrives as a notice. `shutdown` only
 * detaches: the server and its agents go on. The history and workflow services beside the core
 * send their requests on the same connection (remote-services.ts).
 */
export async function attachRemote(options: AttachOptions): Promise<RemoteSession> {
  const early: LegionEvent[] = [];
  let onEvent: (event: LegionEvent) => void = (event) => void early.push(event);
  let closeReason: { reason: string; how: CloseKind } | undefined;
  let onClose: (reason: string, how: CloseKind) => void = (reason, how) => { closeReason = { reason, how }; };
  const policy = options.reconnect ?? BRIEF;
  // Unref'd: a wait between tries never keeps a quitting front end's process alive.
  const sleep = options.sleep ?? ((ms: number) => delay(ms, undefined, { ref: false }));
  const client = options.client ?? 'tui';
  let connection: Connection = await connectServer({
    socket: options.socket, client, onEvent: (event) => onEvent(event), onClose: (reason, how) => onClose(reason, how),
  });
  /** Every request goes through the table's caller: params typed by the entry, the result checked by its schema. */
  const call = createCaller(METHOD_TABLE, (method, params) => connection.request(method as Method, params as ParamsOf<Method>));
  let snapshot: Snapshot;
  try {
    snapshot = (await call('snapshot', {})) as unknown as Snapshot;
  } catch (error) {
    connection.close();
    throw error;
  }
  /** Replaced whole when a reconnection could only be answered with a snapshot (`resync`). */
  let mirror: Mirror = mirrorFrom(snapshot);
  /** The server start this client follows (the welcome's `instance`). */
  let instance = connection.welcome.instance;
  const bus: RelayBus = createRelayBus(snapshot.runId, snapshot.lastSeq);
  const notice = (level: 'warn' | 'error', message: string, sessionId?: string): void =>
    void bus.emit({ type: 'notice', level, message, ...(sessionId ? { sessionId } : {}) });

  // Events wait in order behind one whose missing state is being fetched (refreshFor).
  const queue: LegionEvent[] = [];
  let fetching: Refresh | null = null;
  const fetchDone = new Set<LegionEvent>();
  const runRefresh = async (refresh: Refresh): Promise<void> => {
    if (refresh.kind === 'participants') {
      mirror.participants = (await call('participants', {})) as Participant[];
    } else if (refresh.kind === 'contextRecords') {
      mirror.contextRecords.set(refresh.sessionId, await call('contextRecords', { sessionId: refresh.sessionId }));
    } else {
      const fresh = (await call('sessions', {})) as SessionInfo[];
      for (const s of fresh) {
        const mine = mirror.sessions.get(s.id);
        if (!mine) continue;
        const { awaitingUser: _drop, ...rest } = mine;
        mirror.sessions.set(s.id, s.awaitingUser ? { ...rest, awaitingUser: true } : rest);
      }
    }
  };
  /** True while a snapshot that replaces the mirror is on its way: events wait in `queue`. */
  let resyncing = false;
  const pump = (): void => {
    while (queue.length > 0 && !fetching && !resyncing) {
      const event = queue[0]!;
      const refresh = fetchDone.has(event) ? null : refreshFor(mirror, event);
      if (refresh) {
        fetching = refresh;
        runRefresh(refresh)
          .catch((error: unknown) => { if (connection.isOpen) notice('warn', messageOf(error)); })
          .finally(() => { fetching = null; fetchDone.add(event); pump(); });
        return;
      }
      queue.shift();
      fetchDone.delete(event);
      if (event.seq <= mirror.lastSeq) continue;
      applyEvent(mirror, event);
      bus.deliver(event);
    }
  };
  /** The seq of the last event received (applied or waiting in `queue`): a reconnection asks for what follows. */
  let lastReceived = snapshot.lastSeq;
  onEvent = (event) => {
    if (event.seq <= lastReceived) return;
    lastReceived = event.seq;
    queue.push(event);
    pump();
  };
  for (const event of early) onEvent(event);

  let resolveClosed: (reason: string) => void = () => undefined;
  const closed = new Promise<string>((resolve) => { resolveClosed = resolve; });
  let detaching = false;
  const linkListeners = new Set<(link: LinkState) => void>();
  /** `connected` only once a new connection's state is in the mirror: commands are refused before. */
  let link: LinkState = { state: 'connected' };
  const setLink = (next: LinkState): void => {
    link = next;
    for (const listener of [...linkListeners]) {
      try { listener(next); } catch (error) { notice('error', `showing the connection state failed: ${messageOf(error)}`); }
    }
  };
  const gone = (message: string, reason: string): void => {
    if (!detaching) {
      setLink({ state: 'gone', message });
      notice('error', message);
    }
    resolveClosed(reason);
  };
  const quitHint = policy.maxTries === Infinity ? 'Ctrl+C to quit' : `${policy.maxTries} tries`;
  /**
   * A connection lost without a protocol break is tried again with `since` (policy: the delays
   * double up to a cap; the TUI tries until it detaches, docs/serve.md#when-the-server-goes-away).
   * The same server still holding every event after the last one received replays them: nothing
   * lost. Another start of the server (a restart), or one too far ahead, is answered with its
   * snapshot, which replaces the whole mirror. A server that now serves another run ends it.
   */
  const reconnect = async (reason: string, how: CloseKind): Promise<void> => {
    try { await tryAgain(reason, how); } finally { reconnecting = false; }
  };
  const tryAgain = async (reason: string, how: CloseKind): Promise<void> => {
    const lost = how === 'bye' ? `the Legion server stopped (${reason})` : `the connection to the Legion server was lost (${reason})`;
    for (let attempt = 0; attempt < policy.maxTries && !detaching; attempt++) {
      setLink({ state: 'reconnecting', attempt: attempt + 1, message: `${lost}: reconnecting… (attempt ${attempt + 1}, ${quitHint})` });
      await sleep(reconnectDelayMs(policy, attempt));
      if (detaching) return;
      // Events of the new connection wait here until it is known whether a snapshot replaces the mirror.
      const refused = options.checkSocket?.() ?? null;
      if (refused) {
        setLink({ state: 'reconnecting', attempt: attempt + 1, message: `${lost}: not reconnecting to ${options.socket}: ${refused} (attempt ${attempt + 1}, ${quitHint})` });
        continue;
      }
      const early: LegionEvent[] = [];
      let deliver: (event: LegionEvent) => void = (event) => void early.push(event);
      let next: Connection;
      try {
        next = await connectServer({ socket: options.socket, client, since: lastReceived, onEvent: (event) => deliver(event), onClose: (r, h) => onClose(r, h) });
      } catch {
        continue;
      }
      if (detaching) return void next.close();
      if (next.welcome.runId !== snapshot.runId) {
        const keep = onClose;
        onClose = () => undefined; // this one is closed on purpose
        next.close();
        onClose = keep;
        return gone(`${lost}; the Legion server is back but now serves run ${next.welcome.runId}, not ${snapshot.runId}: quit and start \`legion\` again to attach to it`, `${reason}; the server now serves another run`);
      }
      connection = next;
      const restarted = next.welcome.instance !== instance;
      instance = next.welcome.instance;
      if (next.welcome.replay === 'since' && !restarted) {
        deliver = (event) => onEvent(event);
        for (const event of early) onEvent(event);
        setLink({ state: 'connected' });
        notice('warn', `${lost} and is back; nothing was missed`);
        return;
      }
      // Another start of the server, or one that no longer holds every event after
      // `lastReceived`: its snapshot replaces the whole mirror. Events already queued from the
      // old connection are covered by it; the new connection's wait (those it covers are skipped).
      resyncing = true;
      queue.length = 0;
      lastReceived = next.welcome.lastSeq;
      deliver = (event) => onEvent(event);
      for (const event of early) onEvent(event);
      try {
        const fresh = (await call('snapshot', {})) as unknown as Snapshot;
        mirror = mirrorFrom(fresh);
        fetching = null;
        fetchDone.clear();
        if (fresh.lastSeq > lastReceived) lastReceived = fresh.lastSeq;
        bus.resync(fresh.lastSeq);
      } catch (error) {
        resyncing = false;
        if (next.isOpen) {
          next.close();
          return gone(`${lost}; the server's snapshot could not be read: ${messageOf(error)}`, reason);
        }
        continue; // lost again while asking: onClose started no other loop (this one is running)
      }
      resyncing = false;
      for (const listener of [...resyncListeners]) {
        try { listener(); } catch (error) { notice('error', `rebuilding the screen failed: ${messageOf(error)}`); }
      }
      setLink({ state: 'connected' });
      notice('warn', restarted
        ? `the Legion server is back (pid ${next.welcome.pid}, restarted): everything was rebuilt from its snapshot`
        : `${lost} and is back, but events were missed (the server no longer held them): everything was rebuilt from its snapshot`);
      pump();
      return;
    }
    if (!detaching) gone(`${lost}; no answer after ${policy.maxTries} tries: quit and start \`legion\` again`, reason);
  };
  /** True while `reconnect` runs: a connection it made and lost again is its business (it tries again). */
  let reconnecting = false;
  onClose = (reason, how) => {
    if (detaching) return gone(reason, reason);
    if (how === 'broken') return gone(`the Legion server went away (${reason}): quit and start \`legion\` again`, reason);
    if (how === 'bye' && !policy.afterBye) return gone(`the Legion server went away (${reason}): quit and start \`legion\` again`, reason);
    if (reconnecting) {
      if (link.state === 'connected') setLink({ state: 'reconnecting', attempt: 0, message: `the connection to the Legion server was lost (${reason}): reconnecting…` });
      return;
    }
    reconnecting = true;
    void reconnect(reason, how);
  };
  if (closeReason !== undefined) onClose(closeReason.reason, closeReason.how);

  /** Fire a command; a refusal or failure the server reports becomes a notice. */
  const fire = <M extends Method>(method: M, params: ParamsOf<M>, sessionId?: string): void => {
    call(method, params).then(
      (value: unknown) => {
        // Each fired method's result is an outcome (or null, `cancel`), checked by its entry.
        const outcome = value as { ok: boolean; error?: string } | null;
        if (outcome && !outcome.ok) notice('warn', outcome.error ?? `${method} was refused`, sessionId);
      },
      (error: unknown) => notice('error', `${method}: ${messageOf(error)}`, sessionId),
    );
  };
  /** Commands wait for nothing: while the link is down (or its state not yet rebuilt) they are refused, and the front end keeps the input. */
  const notConnected = (): SendOutcome | null => {
    if (link.state === 'connected' && connection.isOpen) return null;
    return { ok: false, error: link.state === 'reconnecting' ? 'not connected to the Legion server (reconnecting): nothing was sent; try again once it is back' : 'not connected to the Legion server' };
  };

  const checkTarget = (responderId: string, name: string): string | null => {
    const problem = checkSessionName(name);
    if (problem) return problem;
    if (responderId === USER_ID) return 'you cannot send a message to yourself';
    const target = mirror.participants.find((p) => p.id === responderId);
    if (!target) return `no participant "${responderId}"`;
    if (target.status !== 'active') return `${responderId} is retired and takes no messages`;
    return null;
  };
  const busy = (id: string): boolean => {
    const status = mirror.sessions.get(id)?.status;
    return status !== undefined && status !== 'idle' && status !== 'error';
  };

  const resyncListeners = new Set<() => void>();

  const core: RemoteCore = {
    onLink(listener) {
      linkListeners.add(listener);
      return () => void linkListeners.delete(listener);
    },
    onResync(listener) {
      resyncListeners.add(listener);
      return () => void resyncListeners.delete(listener);
    },
    runId: snapshot.runId,
    bus,
    welcome: connection.welcome,
    closed,
    send(responderId, text, name = DEFAULT_SESSION_NAME) {
      const down = notConnected();
      if (down) return down;
      if (!text.trim()) return { ok: false, error: 'empty message' };
      const problem = checkTarget(responderId, name);
      if (problem) return { ok: false, error: problem };
      const lane = sessionIdOf({ initiatorId: responderId, responderId: USER_ID, name });
      const sessionId = mirror.sessions.get(lane)?.awaitingUser ? lane : sessionIdOf({ initiatorId: USER_ID, responderId, name });
      fire('send', { responderId, text, name }, sessionId);
      return { ok: true, sessionId, queued: sessionId !== lane && busy(sessionId) };
    },
    reply(sessionId, text) {
      const down = notConnected();
      if (down) return down;
      if (!mirror.sessions.has(sessionId)) return { ok: false, error: `no session ${sessionId}` };
      if (!text.trim()) return { ok: false, error: 'empty message' };
      fire('reply', { sessionId, text }, sessionId);
      return { ok: true, sessionId, queued: false };
    },
    usage: () => usageOf(mirror),
    idle: (sessionId) => call('idle', { sessionId }),
    openSession(responderId, name = DEFAULT_SESSION_NAME) {
      const down = notConnected();
      if (down) return down;
      const problem = checkTarget(responderId, name);
      if (problem) return { ok: false, error: problem };
      fire('openSession', { responderId, name });
      return { ok: true, sessionId: sessionIdOf({ initiatorId: USER_ID, responderId, name }) };
    },
    resolveApprovals(requestIds, decision, opts = {}) {
      const down = notConnected();
      if (down) return down;
      const unique = [...new Set(requestIds)];
      if (unique.length === 0) return { ok: false, error: 'no approval request given' };
      const unknown = unique.filter((id) => !mirror.pending.has(id));
      if (unknown.length > 0) return { ok: false, error: `${unknown.map((id) => `approval request ${id} is not pending`).join('; ')}: nothing was ${decision}` };
      fire('resolveApprovals', {
        requestIds: unique, decision, ...(opts.reason !== undefined ? { reason: opts.reason } : {}), ...(opts.allowForSession !== undefined ? { allowForSession: opts.allowForSession } : {}),
      });
      return { ok: true };
    },
    cancel(sessionId) {
      if (!notConnected()) fire('cancel', { sessionId }, sessionId);
    },
    participants: () => mirror.participants,
    sessions: () => [...mirror.sessions.values()],
    history: (sessionId) => mirror.histories.get(sessionId) ?? [],
    contextRecords: (sessionId) => mirror.contextRecords.get(sessionId) ?? [],
    compact: async (sessionId) => {
      const r = await call('compact', { sessionId });
      return r.ok ? { ok: true, text: r.text ?? '' } : r;
    },
    pendingApprovals: (): PendingApproval[] => [...mirror.pending.values()],
    lastOutcome: async (sessionId) => ((await call('lastOutcome', { sessionId })) as TurnOutcome | null) ?? undefined,
    async shutdown() {
      detaching = true;
      if (connection.isOpen) connection.close();
      else resolveClosed('closed by the client');
    },
  };
  const remote: RemoteLink = { call, fire, connected: () => !notConnected() };
  return { core, history: remoteHistory(remote), workflows: remoteWorkflows(remote) };
}
