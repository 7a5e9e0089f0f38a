import type { AgentStatus } from '../src/events/types';

/** 950 → "950", 12_345 → "12.3k", 4_200_000 → "4.2M". */
export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0).replace(/\.0$/, '')}k`;
  return `${(n / 1_000_000).toFixed(1).replace(/\.0$/, '')}M`;
}

/** Dollars with sensible precision; `known` false marks a total missing some prices. */
export function formatCost(usd: number, known = true): string {
  const text = usd === 0 ? '$0' : usd < 0.01 ? `$${usd.toFixed(4)}` : usd < 10 ? `$${usd.toFixed(3)}` : `$${usd.toFixed(2)}`;
  return known ? text : `${text}+?`;
}

/** Status words of a lane header. */
export function statusText(status: AgentStatus, detail: string | undefined): string {
  switch (status) {
    case 'idle': return 'idle';
    // The core gives `thinking` a detail only for a question waiting on the user ("waiting for your answer").
    case 'thinking': return detail ?? 'thinking';
    case 'running-tool': return detail ? `running ${detail}` : 'running tool';
    case 'waiting-approval': return 'waiting approval';
    case 'error': return detail ? `error: ${detail}` : 'error';
    default: {
      const unreachable: never = status;
      return unreachable;
    }
  }
}
