import type { Provider, ProviderEvent, ProviderRequest } from '../../src/providers/types';
import type { Message } from '../../src/model/message';

/** A small request in the internal format; override any field. */
export function request(overrides: Partial<ProviderRequest> = {}): ProviderRequest {
  return {
    system: 'You are a test agent.',
    messages: [userText('Hello')],
    tools: [],
    model: 'claude-haiku-4-5',
    maxTokens: 1024,
    ...overrides,
  };
}

export function userText(text: string): Message {
  return { role: 'user', content: [{ type: 'text', text }], at: '2025-01-01T00:00:00.000Z' };
}

export interface Collected {
  readonly events: ProviderEvent[];
  readonly notices: string[];
  readonly text: string;
  readonly last: ProviderEvent | undefined;
  readonly ms: number;
}

/** Drain `provider.stream` into an array, asserting nothing is thrown. */
export async function collect(
  provider: Provider,
  req: ProviderRequest,
  signal: AbortSignal = new AbortController().signal,
  onEvent?: (event: ProviderEvent) => void,
): Promise<Collected> {
  const notices: string[] = [];
  const started = performance.now();
  const events: ProviderEvent[] = [];
  for await (const event of provider.stream({ ...req, onNotice: (_level, message) => notices.push(message) }, signal)) {
    events.push(event);
    onEvent?.(event);
  }
  const text = events.map((e) => (e.type === 'text-delta' ? e.text : '')).join('');
  return { events, notices, text, last: events[events.length - 1], ms: performance.now() - started };
}

/** The single terminal event must be the last one, and there must be exactly one. */
export function terminalEvents(events: readonly ProviderEvent[]): ProviderEvent[] {
  return events.filter((e) => e.type === 'end' || e.type === 'error');
}
