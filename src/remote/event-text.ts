import type { LegionEvent } from '../events/types';
import { textOf } from '../model/message';
import { keyArgumentOf as keyArgument } from '../collective/tools/shipped';

/** Longest text a one-line description carries (notifications, Telegram messages). */
export const DESCRIBE_MAX = 300;

function cut(text: string, max = DESCRIBE_MAX): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Who decided, as people say it: "in the terminal", "on the web page", "in Telegram by @ann", "by rule". */
export function decidedByText(decidedBy: string): string {
  if (decidedBy === 'user') return 'in the terminal';
  if (decidedBy === 'remote:web') return 'on the web page';
  if (decidedBy.startsWith('remote:telegram:')) return `in Telegram by ${decidedBy.slice('remote:telegram:'.length)}`;
  if (decidedBy.startsWith('agent:')) return `by ${decidedBy.slice('agent:'.length)}`;
  return `by ${decidedBy}`;
}

/** "worker wants file_write notes.md (user → worker)": the asking agent, the tool, its key argument, the chain. */
export function requestLine(request: { participantId: string; toolName: string; input: unknown; chain: readonly string[] }): string {
  const key = keyArgument(request.toolName, request.input);
  return cut(`${request.participantId} wants ${request.toolName}${key ? ` ${key}` : ''} (${request.chain.join(' → ')})`);
}

/**
 * One plain-text line saying what an event means, for notifications and chat messages.
 * Every string from agents or tools is cut to `DESCRIBE_MAX` and kept on one line; it is
 * NOT escaped: a caller that renders markup escapes it itself.
 */
export function describeEvent(event: LegionEvent): string {
  switch (event.type) {
    case 'approval-request':
      return `approval ${event.requestId}: ${requestLine(event)}${event.reason ? ` — ${cut(event.reason, 120)}` : ''}`;
    case 'approval-resolve':
      return `approval ${event.requestId} ${event.decision} ${decidedByText(event.decidedBy)}${event.reason && event.reason !== `${event.decision} by ${event.decidedBy}` ? `: ${cut(event.reason, 120)}` : ''}`;
    case 'run-start':
      return `run ${event.runId} ${event.resumed ? 'resumed' : 'started'}`;
    case 'run-end':
      return `run ${event.runId} ended: ${cut(event.reason, 120)}`;
    case 'session-open':
      return `session opened: ${event.initiatorId} → ${event.responderId} · ${event.name}`;
    case 'message-add': {
      const text = textOf(event.message);
      return cut(`${event.sessionId} ${event.message.role}: ${text || '(tool calls)'}`);
    }
    case 'tool-call-start':
      return cut(`${event.participantId} runs ${event.name} ${keyArgument(event.name, event.input)}`);
    case 'tool-call-end':
      return cut(`${event.participantId} ${event.name} ${event.isError ? `failed (${event.failure ?? 'error'})` : 'done'}: ${event.summary}`);
    case 'agent-status':
      return `${event.participantId} is ${event.status}${event.detail ? ` (${cut(event.detail, 80)})` : ''} in ${event.sessionId}`;
    case 'notice':
      return cut(`${event.level}: ${event.message}`);
    case 'participant-change':
      return `${event.participantId} ${event.change}`;
    case 'usage':
      return `${event.participantId} used ${event.inputTokens} in / ${event.outputTokens} out tokens${event.costUsd === null ? '' : ` ($${event.costUsd.toFixed(4)})`}`;
    case 'mcp-status':
      return cut(`MCP server ${event.server} ${event.state}${event.error ? `: ${event.error}` : ''}`);
    default:
      return `${event.type}${'sessionId' in event ? ` in ${String(event.sessionId)}` : ''}`;
  }
}
