import type { Line } from '../text/line';
import { wrapSpans } from '../text/wrap';

/** What the welcome names: the keys in effect, the workspace, and whether this is the demo. */
export interface WelcomeOptions {
  readonly demo: boolean;
  /** The workspace folder the agents work in (absent: not named). */
  readonly workspaceRoot?: string;
  readonly sendKey: string;
  readonly helpKey: string;
  readonly approvalsKey: string;
}

/**
 * The welcome shown in the empty home lane until its first message: what to type, where the
 * keys are, how approvals reach the user, the workspace, and in the demo what the demo does.
 * Paragraphs of plain text (the lane wraps them to its width).
 */
export function welcomeText(o: WelcomeOptions): string[] {
  const out = [
    'Welcome to Legion.',
    `Type what you want done and press ${o.sendKey}. ur-agent plans it and asks other agents for help; ` +
      'each of those conversations opens its own lane beside this one.',
    `When an agent wants to write, edit or delete a file or run a command, you decide: the approval ` +
      `queue opens by itself (or press ${o.approvalsKey}). ${o.helpKey} lists every key.`,
  ];
  if (o.demo) {
    out.push(
      'Demo: no API key is set, so the replies are scripted, on the real machinery. Type anything: ur-agent ' +
        'delegates to scribe, which writes notes/demo.md once you approve the write. ' +
        'Set ANTHROPIC_API_KEY or OPENAI_API_KEY and restart to work with real models.',
    );
  }
  if (o.workspaceRoot) out.push(`Workspace: ${o.workspaceRoot}`);
  return out;
}

/** The welcome as lane lines of at most `width` cells, a blank line between paragraphs. */
export function welcomeLines(paragraphs: readonly string[], width: number): Line[] {
  const lines: Line[] = [];
  paragraphs.forEach((text, i) => {
    if (i > 0) lines.push([]);
    lines.push(...wrapSpans([{ text, tone: i === 0 ? 'accent' : 'muted', bold: i === 0 }], Math.max(1, width)));
  });
  return lines;
}
