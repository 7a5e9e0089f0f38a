import type { LegionEvent } from '../../events/types';
import type { Message } from '../../model/message';
import type { PendingApproval } from '../../runtime/core-api';
import { keyArgumentOf as keyArgument } from '../../collective/tools/shipped';
import { renderMarkdown } from './markdown';

/**
 * What the page receives: transcripts as items whose only markup is `html` from
 * renderMarkdown (escaped first); every other string is set with textContent by the page.
 */
export type ViewItem =
  | { readonly kind: 'text'; readonly role: Message['role']; readonly html: string }
  | { readonly kind: 'tool'; readonly id: string; readonly name: string; readonly key: string }
  | { readonly kind: 'result'; readonly toolUseId: string; readonly isError: boolean; readonly summary: string };

const RESULT_MAX = 300;
const INPUT_MAX = 2000;

function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function messageView(message: Message): ViewItem[] {
  return message.content.map((block): ViewItem => {
    if (block.type === 'text') return { kind: 'text', role: message.role, html: renderMarkdown(block.text) };
    if (block.type === 'tool_use') return { kind: 'tool', id: block.id, name: block.name, key: keyArgument(block.name, block.input) };
    return { kind: 'result', toolUseId: block.toolUseId, isError: block.isError === true, summary: shorten(block.content.trim(), RESULT_MAX) };
  });
}

export function historyView(messages: readonly Message[]): ViewItem[] {
  return messages.flatMap(messageView);
}

/** A pending request for the queue: its key argument and its input as indented JSON (cut). */
export function approvalView(request: Pick<PendingApproval, 'requestId' | 'sessionId' | 'participantId' | 'chain' | 'toolName' | 'input' | 'reason' | 'approverId'>) {
  let input: string;
  try {
    input = JSON.stringify(request.input, null, 2) ?? String(request.input);
  } catch {
    input = String(request.input);
  }
  return {
    requestId: request.requestId, sessionId: request.sessionId, participantId: request.participantId, chain: [...request.chain],
    toolName: request.toolName, key: keyArgument(request.toolName, request.input), input: shorten(input, INPUT_MAX),
    reason: request.reason ?? '', approverId: request.approverId,
  };
}

/**
 * An event as the page gets it over SSE: `message-add` carries the rendered view instead of
 * the raw message, `approval-request` the queue row; other events pass as they are.
 */
export function eventView(event: LegionEvent): unknown {
  if (event.type === 'message-add') {
    const { message, ...rest } = event;
    return { ...rest, role: message.role, items: messageView(message) };
  }
  if (event.type === 'approval-request') return { ...event, request: approvalView(event) };
  return event;
}
