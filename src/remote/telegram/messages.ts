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

/** Button data: `a:<id>` approves, `r:<id>` rejects (Telegram allows 64 bytes). */
export function buttonData(decision: 'approved' | 'rejected', requestId: string): string {
  return `${decision === 'approved' ? 'a' : 'r'}:${requestId}`;
}

export function parseButton(data: string | undefined): { decision: 'approved' | 'rejected'; requestId: string } | null {
  const match = /^([ar]):(.{1,60})$/.exec(data ?? '');
  if (!match) return null;
  return { decision: match[1] === 'a' ? 'approved' : 'rejected', requestId: match[2]! };
}

/** `remote:telegram:@name`, or the numeric user id when the user has no username. */
export function actorOf(from: { id: number; username?: string } | undefined): RemoteActor {
  if (!from) return 'remote:telegram:unknown';
  return `remote:telegram:${from.username ? `@${from.username.replace(/[^\w]/g, '')}` : String(from.id)}`;
}
