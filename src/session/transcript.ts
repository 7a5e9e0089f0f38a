import type { Message, ToolResultBlock } from '../model/message';
import { formatStamp } from './format';
import type { SessionKey } from './types';
import type { ContextRecord } from '../context/records';
import type { KeyArgumentOf } from '../tools/key-argument';

/** One line of a transcript; `messageIndex` points at the message it comes from (-1: the header). */
export interface TranscriptLine {
  readonly messageIndex: number;
  readonly kind: 'header' | 'speaker' | 'text' | 'tool' | 'result' | 'blank' | 'mark';
  readonly text: string;
}

const MAX_ARGUMENT = 80;
const MAX_RESULT = 100;

function oneLine(text: string, max: number): string {
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  const first = (lines[0] ?? '').replace(/\s+/g, ' ');
  if (first.length > max) return first.slice(0, max - 1) + '…';
  return lines.length > 1 ? first + '…' : first;
}

/** `↳ ok: first line…` / `↳ error: …` / `↳ (no result)`. */
export function foldResult(result: ToolResultBlock | undefined): string {
  if (!result) return '↳ (no result)';
  const head = oneLine(result.content, MAX_RESULT);
  return `↳ ${result.isError ? 'error' : 'ok'}${head ? `: ${head}` : ''}`;
}

/**
 * A session as readable plain lines: who said what (the initiator speaks as role `user`, the
 * responder as `assistant`), each tool call as `⚙ tool key-argument` (`keyOf`) with its result folded
 * under it. Messages holding only results already shown under their calls are not repeated;
 * results that answer nothing shown are listed where they stand.
 */
export function transcriptLines(key: SessionKey, messages: readonly Message[], keyOf: KeyArgumentOf, records: readonly ContextRecord[] = []): TranscriptLine[] {
  const name = key.name === 'default' ? '' : ` · ${key.name}`;
  const out: TranscriptLine[] = [{ messageIndex: -1, kind: 'header', text: `${key.initiatorId} → ${key.responderId}${name}` }];
  const marks = compactionMarks(records);
  let shownResults = new Set<string>();
  messages.forEach((message, index) => {
    const next = messages[index + 1];
    const resultsNext = new Map<string, ToolResultBlock>();
    if (message.role === 'assistant' && next?.role === 'user') {
      for (const b of next.content) if (b.type === 'tool_result') resultsNext.set(b.toolUseId, b);
    }
    const body: TranscriptLine[] = [];
    for (const block of message.content) {
      switch (block.type) {
        case 'text':
          if (block.text.trim() === '') break;
          for (const line of block.text.replace(/\s+$/, '').split('\n')) body.push({ messageIndex: index, kind: 'text', text: `  ${line}` });
          break;
        case 'tool_use': {
          const arg = oneLine(keyOf(block.name, block.input), MAX_ARGUMENT);
          body.push({ messageIndex: index, kind: 'tool', text: `  ⚙ ${block.name}${arg ? ` ${arg}` : ''}` });
          const result = resultsNext.get(block.id);
          body.push({ messageIndex: index, kind: 'result', text: `    ${foldResult(result)}` });
          if (result) shownResults.add(block.id);
          break;
        }
        case 'tool_result':
          if (!shownResults.has(block.toolUseId)) body.push({ messageIndex: index, kind: 'result', text: `  ${foldResult(block)} (for ${block.toolUseId})` });
          break;
        default: {
          const never: never = block;
          throw new Error(`unknown block ${JSON.stringify(never)}`);
        }
      }
    }
    if (message.role === 'user') shownResults = new Set();
    for (const text of marks.get(index) ?? []) out.push({ messageIndex: index, kind: 'blank', text: '' }, { messageIndex: index, kind: 'mark', text });
    if (body.length === 0) return;
    const speaker = message.role === 'user' ? key.initiatorId : key.responderId;
    out.push({ messageIndex: index, kind: 'blank', text: '' });
    out.push({ messageIndex: index, kind: 'speaker', text: `${speaker} · ${formatStamp(message.at)}` });
    out.push(...body);
  });
  return out;
}

/** The transcript as text, one line per `TranscriptLine`, ending with a newline. */
export function renderTranscript(key: SessionKey, messages: readonly Message[], keyOf: KeyArgumentOf, records: readonly ContextRecord[] = []): string {
  return transcriptLines(key, messages, keyOf, records).map((l) => l.text).join('\n') + '\n';
}

const kTokens = (n: number): string => (n >= 1000 ? `${Math.round(n / 1000)}k` : String(n));

/** Each summary's mark, before the first message it kept (docs/context.md): what the model is sent from there on. */
function compactionMarks(records: readonly ContextRecord[]): Map<number, string[]> {
  const marks = new Map<number, string[]>();
  let from = 0;
  for (const r of records) {
    if (r.type !== 'compaction' || r.firstKept <= from) continue;
    const text = `── compaction ${formatStamp(r.at)}: messages ${from}–${r.firstKept - 1} summarized for the model · ${kTokens(r.tokensBefore)} → ${kTokens(r.tokensAfter)} tokens ──`;
    marks.set(r.firstKept, [...(marks.get(r.firstKept) ?? []), text]);
    from = r.firstKept;
  }
  return marks;
}
