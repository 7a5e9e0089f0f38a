import type { EventBus } from '../events/bus';
import type { AgentStatus, EventInput } from '../events/types';

/**
 * What a hub's bus last showed of each agent's status in each session
 * (docs/engine.md#streaming-and-the-hub). In engine mode two sources say the status of a turn's
 * agent: the hub (`thinking` when it sends the turn, `idle` or `error` when it ends) and the
 * worker running it (every change, its own `thinking` at the start and `idle` at the end among
 * them). Each source emits only on a change of its own, so front ends and the ledger got the
 * start's `thinking` and the end's `idle` twice; in-process they get each once. With this, a
 * worker's status the bus already shows is not emitted again (`repeats`), and the hub's own end
 * of a turn is not emitted when the worker's feed already showed it (`shows`).
 */
export interface ShownStatus {
  /** A feed's event is an `agent-status` the bus shows already (same agent, session, status and detail). */
  repeats(event: EventInput): boolean;
  /** The bus shows `participantId` in `sessionId` as `status` without a detail. */
  shows(sessionId: string, participantId: string, status: AgentStatus): boolean;
}

const keyOf = (sessionId: string, participantId: string): string => `${sessionId}\n${participantId}`;
const valueOf = (status: string, detail: string | undefined): string => (detail === undefined ? status : `${status}\n${detail}`);

export function trackShownStatus(bus: Pick<EventBus, 'subscribe'>): ShownStatus {
  const shown = new Map<string, string>();
  bus.subscribe('agent-status', (event) => void shown.set(keyOf(event.sessionId, event.participantId), valueOf(event.status, event.detail)));
  return {
    repeats: (event) => event.type === 'agent-status' && shown.get(keyOf(event.sessionId, event.participantId)) === valueOf(event.status, event.detail),
    shows: (sessionId, participantId, status) => shown.get(keyOf(sessionId, participantId)) === status,
  };
}
