import type { NotifyTargetConfig } from '../../config/remote-schema';
import type { EventBus } from '../../events/bus';
import { EVENT_TYPES, type EventType, type LegionEvent } from '../../events/types';
import { describeEvent } from '../event-text';
import { createDelivery, defaultBackoff, urlLabel, type Delivery } from './delivery';

/**
 * Notifications (docs/remote.md#notifications): each configured event is POSTed as JSON
 * `{ "text": "<one line>", "event": { …the event… } }` to every target that chose its kind.
 * Subscribing costs the core one `push` per event; delivery happens in the background.
 * Failures become `notice` events (never thrown). Notices this module emits are not notified
 * again, so a failing endpoint cannot feed itself.
 */
export interface NotifyDeps {
  readonly bus: Pick<EventBus, 'subscribeAll' | 'emit'>;
  readonly targets: readonly NotifyTargetConfig[];
  readonly fetch?: typeof fetch;
  /** Delay before retry n (1-based); default 500 ms × 2^(n-1), at most 30 s. */
  readonly backoffMs?: (attempt: number) => number;
  /** Notifications waiting per target beyond this are dropped, oldest first (default 100). */
  readonly queueLimit?: number;
  /** How long `close` waits for waiting notifications (a `run-end`) before dropping them (default 5000 ms: one default attempt). */
  readonly closeGraceMs?: number;
}

export interface NotifyHandle {
  /** Stops listening, gives the queues `closeGraceMs` to empty, then aborts. */
  close(): Promise<void>;
}

const NOTICE_PREFIX = 'notify: ';

export function startNotify(deps: NotifyDeps): NotifyHandle {
  const known = new Set<string>(EVENT_TYPES);
  const routes = new Map<EventType, Delivery[]>();
  const deliveries: Delivery[] = [];
  const report = (level: 'info' | 'warn', message: string): void => void deps.bus.emit({ type: 'notice', level, message });

  for (const target of deps.targets) {
    const unknown = target.events.filter((e) => !known.has(e));
    if (unknown.length > 0) {
      report('warn', `${NOTICE_PREFIX}${urlLabel(target.url)}: unknown event kind${unknown.length > 1 ? 's' : ''} ${unknown.map((e) => `"${e}"`).join(', ')} ignored (known: ${EVENT_TYPES.join(', ')})`);
    }
    const kinds = target.events.filter((e): e is EventType => known.has(e));
    if (kinds.length === 0) continue;
    const delivery = createDelivery({
      url: target.url,
      ...(target.headers ? { headers: target.headers } : {}),
      timeoutMs: target.timeoutMs,
      retries: target.retries,
      queueLimit: deps.queueLimit ?? 100,
      fetch: deps.fetch ?? globalThis.fetch,
      backoffMs: deps.backoffMs ?? defaultBackoff,
      report,
    });
    deliveries.push(delivery);
    for (const kind of new Set(kinds)) routes.set(kind, [...(routes.get(kind) ?? []), delivery]);
  }

  const onEvent = (event: LegionEvent): void => {
    const targets = routes.get(event.type);
    if (!targets) return;
    if (event.type === 'notice' && event.message.startsWith(NOTICE_PREFIX)) return;
    let body: string;
    try {
      body = JSON.stringify({ text: `legion: ${describeEvent(event)}`, event });
    } catch {
      return;
    }
    for (const delivery of targets) delivery.push(body);
  };
  const unsubscribe = routes.size > 0 ? deps.bus.subscribeAll(onEvent) : () => undefined;

  let closing: Promise<void> | undefined;
  return {
    close() {
      closing ??= (async () => {
        unsubscribe();
        const grace = deps.closeGraceMs ?? 5000;
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          Promise.all(deliveries.map((d) => d.idle())),
          new Promise<void>((resolve) => { timer = setTimeout(resolve, grace); }),
        ]);
        clearTimeout(timer);
        for (const delivery of deliveries) delivery.abort();
      })();
      return closing;
    },
  };
}
