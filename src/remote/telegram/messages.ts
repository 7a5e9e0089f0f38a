import { randomBytes } from 'node:crypto';
import type { PendingApproval } from '../../runtime/core-api';
import type { RemoteActor } from '../../events/types';
import { decidedByText, requestLine } from '../event-text';

/**
 * The texts and button data of Telegram approvals (docs/remote.md#telegram). Messages are
 * plain text (no parse_mode), so nothing from an agent can format or link anything.
 */

export type RequestShape = Pick<PendingApproval, 'requestId' | 'participantId' | 'chain' | 'toolName' | 'input'> & { readonly reason?: string };

export function requestMessage(request: RequestShape): string {
  const lines = [`Approval ${request.requestId}: ${requestLine(request)}`];
  if (request.reason) lines.push(`why asked: ${request.reason.slice(0, 300)}`);
  return lines.join('\n');
}

export function decidedMessage(original: string, decision: string, decidedBy: string, reason: string): string {
  const defaultReason = `${decision} by ${decidedBy}`;
  const mark = decision === 'approved' ? '✅' : '❌';
  return `${original}\n\n${mark} ${decision} ${decidedByText(decidedBy)}${reason && reason !== defaultReason ? `: ${reason.slice(0, 300)}` : ''}`;
}

export function questionMessage(askedBy: string, sessionId: string, text: string): string {
  return `❓ ${askedBy} asks (${sessionId}):\n${text.slice(0, 3500)}\n\nReply to this message to answer.`;
}

/**
 * Button data: `a:<button id>` approves, `r:<button id>` rejects. The button id is random per
 * request and per run (`newButtonId`), never the request id: request ids (`apr-1`) start again
 * in every run, so a button left in the chat by a stopped run, or by another workspace on the
 * same bot, must not name a request of this one. It fits Telegram's 64-byte `callback_data`.
 */
export function buttonData(decision: 'approved' | 'rejected', buttonId: string): string {
  return `${decision === 'approved' ? 'a' : 'r'}:${buttonId}`;
}

/** 16 random bytes, base64url (22 characters): unguessable, and `a:` + it is 24 bytes. */
export function newButtonId(): string {
  return randomBytes(16).toString('base64url');
}

export function parseButton(data: string | undefined): { decision: 'approved' | 'rejected'; buttonId: string } | null {
  const match = /^([ar]):([A-Za-z0-9_-]{1,60})$/.exec(data ?? '');
  if (!match) return null;
  return { decision: match[1] === 'a' ? 'approved' : 'rejected', buttonId: match[2]! };
}

/** What a press of a button this run does not know (stale, or another workspace's) answers; it decides nothing. */
export const STALE_BUTTON = 'this request is no longer pending';

/** The edit of a request's message when the run that sent it stops: its buttons go. */
export function stoppedMessage(original: string): string {
  return `${original}\n\n⏹ no longer pending here: this Legion run stopped (a request that still waits is sent again when Legion runs)`;
}

/** `remote:telegram:@name`, or the numeric user id when the user has no username. */
export function actorOf(from: { id: number; username?: string } | undefined): RemoteActor {
  if (!from) return 'remote:telegram:unknown';
  return `remote:telegram:${from.username ? `@${from.username.replace(/[^\w]/g, '')}` : String(from.id)}`;
}
