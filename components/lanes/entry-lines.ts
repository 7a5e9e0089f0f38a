import type { Message, TextBlock, ToolResultBlock, ToolUseBlock } from '../../src/model/message';
import type { Line, Span } from '../text/line';
import { EMPTY_LINE } from '../text/line';
import { hardWrap, wrapSpans } from '../text/wrap';
import { truncate, cellWidth } from '../text/width';
import { markdownLines } from '../markdown/markdown-lines';
import type { TranscriptGlyphs } from '../theme';
import type { CompactionEntry, Entry, SessionView, ToolLive, ToolState } from '../state/ui-state';
import { formatTokens } from '../format';
import { sanitize } from '../text/ansi';
import { keyArgumentOf } from '../../src/runtime/core-api';

export interface LineContext {
  readonly width: number;
  readonly expanded: boolean;
  readonly glyphs: TranscriptGlyphs;
  /** `highlightVersion()` when made: lines cached before code highlighting loaded are rebuilt. */
  readonly highlight: number;
}

/** Lines shown for an expanded tool result at most. */
export const EXPANDED_RESULT_LINES = 40;

// Finished text never changes: its wrapped lines are kept per (block, width, glyphs, highlighting).
const textCache = new WeakMap<object, { width: number; glyphs: TranscriptGlyphs; highlight: number; lines: Line[] }>();

function cached(key: object, ctx: LineContext, make: () => Line[]): Line[] {
  const hit = textCache.get(key);
  if (hit && hit.width === ctx.width && hit.glyphs === ctx.glyphs && hit.highlight === ctx.highlight) return hit.lines;
  const lines = make();
  textCache.set(key, { width: ctx.width, glyphs: ctx.glyphs, highlight: ctx.highlight, lines });
  return lines;
}

/**
 * The display lines of entry `i` of `session`. Text is cached; tool rows are rebuilt (one
 * line each, their state changes while they run). A user message carrying only tool results
 * has no lines: results show on the rows of the message before it.
 */
export function entryLines(session: SessionView, i: number, ctx: LineContext): readonly Line[] {
  const entry = session.entries[i]!;
  if (entry.role === 'notice') {
    const tone = entry.level === 'error' ? 'error' : entry.level === 'warn' ? 'warn' : 'muted';
    return cached(entry, ctx, () => [EMPTY_LINE, ...wrapSpans([{ text: sanitize(`${entry.level}: ${entry.text}`), tone }], ctx.width)]);
  }
  if (entry.role === 'compaction') return compactionLines(entry, ctx);
  if (entry.role === 'user') {
    const texts = entry.content.filter((b): b is TextBlock => b.type === 'text');
    if (texts.length === 0) return [];
    return cached(entry, ctx, () => {
      const text = sanitize(texts.map((b) => b.text).join('\n').replace(/\n+$/, ''));
      const prompt: Span = { text: ctx.glyphs.prompt, tone: 'user', bold: true };
      const lines = wrapSpans([{ text, tone: 'user' }], ctx.width, { first: [prompt], rest: [{ text: ' '.repeat(cellWidth(ctx.glyphs.prompt)) }] });
      return i === 0 ? lines : [EMPTY_LINE, ...lines];
    });
  }
  return assistantLines(session, entry, i, ctx);
}

/** `⋯ 142 messages summarized · 48k → 9k tokens`; the summary under it when the lane is expanded. */
const unfolded = new WeakMap<CompactionEntry, object>();

function compactionLines(entry: CompactionEntry, ctx: LineContext): Line[] {
  const n = entry.summarized;
  const row = `${ctx.glyphs.folded} ${n} message${n === 1 ? '' : 's'} summarized ${ctx.glyphs.dot} ${formatTokens(entry.tokensBefore)} → ${formatTokens(entry.tokensAfter)} tokens`;
  const head = cached(entry, ctx, () => [EMPTY_LINE, [{ text: truncate(row, ctx.width), tone: 'muted' }]]);
  if (!ctx.expanded) return head;
  // The unfolded summary is cached under a key of its own (the folded row is cached under the entry).
  let key = unfolded.get(entry);
  if (!key) unfolded.set(entry, (key = {}));
  return [...head, ...cached(key, ctx, () => markdownLines(sanitize(entry.summary), ctx.width, ctx.glyphs.markdown))];
}

// An assistant message's lines, kept while its context and its tool calls' states (live state
// and result, both replaced, never mutated, when they change) are the same.
const assistantCache = new WeakMap<object, { ctx: LineContext; first: boolean; deps: unknown[]; lines: Line[] }>();

function assistantLines(session: SessionView, message: Message, i: number, ctx: LineContext): Line[] {
  const next = session.entries[i + 1];
  const deps: unknown[] = [];
  for (const block of message.content) {
    if (block.type === 'tool_use') deps.push(session.tools[block.id], next && next.role === 'user' ? findResult(next, block.id) : undefined);
  }
  const hit = assistantCache.get(message);
  if (hit && hit.ctx === ctx && hit.first === (i === 0) && hit.deps.length === deps.length && hit.deps.every((d, k) => d === deps[k])) return hit.lines;
  const lines = buildAssistantLines(session, message, i, ctx);
  assistantCache.set(message, { ctx, first: i === 0, deps, lines });
  return lines;
}

function buildAssistantLines(session: SessionView, message: Message, i: number, ctx: LineContext): Line[] {
  const out: Line[] = [];
  const next = session.entries[i + 1];
  let separated = false;
  for (const block of message.content) {
    if (block.type === 'text') {
      if (block.text.trim() === '') continue;
      if (!separated && i > 0) out.push(EMPTY_LINE);
      separated = true;
      out.push(...cached(block, ctx, () => markdownLines(sanitize(block.text), ctx.width, ctx.glyphs.markdown)));
    } else if (block.type === 'tool_use') {
      const result = next && next.role === 'user' ? findResult(next, block.id) : undefined;
      out.push(...toolLines(block, session.tools[block.id], result, ctx));
    }
  }
  return out;
}

function findResult(message: Message, toolUseId: string): ToolResultBlock | undefined {
  for (const b of message.content) if (b.type === 'tool_result' && b.toolUseId === toolUseId) return b;
  return undefined;
}

/** A compact row `⚙ name key-argument ✓ summary`, plus the result when the lane is expanded. */
export function toolLines(use: ToolUseBlock, live: ToolLive | undefined, result: ToolResultBlock | undefined, ctx: LineContext): Line[] {
  const state: ToolState = live?.state ?? (result ? (result.isError ? 'error' : 'ok') : 'pending');
  const g = ctx.glyphs;
  const mark = state === 'ok' ? g.ok : state === 'error' ? g.error : state === 'waiting-approval' ? g.waiting : g.pending;
  const tone = state === 'ok' ? 'ok' : state === 'error' ? 'error' : state === 'waiting-approval' ? 'warn' : 'muted';
  const summary = sanitize(live?.summary ?? live?.progress ?? (result ? resultSummary(result) : ''));
  const head = `${g.tool} ${use.name} `;
  const confinement = sandboxTag(live?.sandboxed);
  const tail = `${confinement ? ` ${confinement}` : ''} ${mark}${summary ? ` ${summary}` : ''}`;
  const argRoom = Math.max(0, ctx.width - cellWidth(head) - Math.min(cellWidth(tail), Math.floor(ctx.width / 3)));
  const arg = truncate(sanitize(keyArgumentOf(use.name, use.input).replaceAll(' · ', ` ${g.dot} `)), argRoom);
  const rest = Math.max(0, ctx.width - cellWidth(head) - cellWidth(arg));
  const row: Line = [
    { text: head, tone: 'accent' },
    { text: arg },
    { text: truncate(tail, rest), tone: live?.sandboxed === false && state !== 'error' ? 'warn' : tone },
  ];
  if (!ctx.expanded || !result) return [row];
  const body = sanitize(result.content.replace(/\n+$/, '')).split('\n');
  const shown = body.slice(0, EXPANDED_RESULT_LINES);
  const lines: Line[] = [row];
  for (const text of shown) {
    for (const l of hardWrap(text, Math.max(1, ctx.width - 2), { dim: true })) lines.push([{ text: '  ' }, ...l]);
  }
  if (body.length > shown.length) lines.push([{ text: `  ${g.more} ${body.length - shown.length} more lines`, tone: 'muted' }]);
  return lines;
}

/** How a row says where a process-starting call runs (docs/sandbox.md); nothing for other tools. */
export function sandboxTag(sandboxed: boolean | undefined): string {
  return sandboxed === undefined ? '' : sandboxed ? '[sandboxed]' : '[no sandbox]';
}

/** Without a live summary (history): an error's first line, else a size. */
function resultSummary(result: ToolResultBlock): string {
  const text = result.content.trim();
  const lines = text === '' ? 0 : text.split('\n').length;
  if (result.isError || lines === 1) {
    const line = text.split('\n', 1)[0] ?? '';
    return line.length > 200 ? line.slice(0, 200) : line;
  }
  return lines === 0 ? '' : `${lines} lines`;
}
