import type { Draft } from '../state/ui-state';
import { EMPTY_DRAFT } from '../state/ui-state';

/** Pastes this large are kept aside and shown as one placeholder token in the composer. */
export const PASTE_SUMMARY_LINES = 8;
export const PASTE_SUMMARY_CHARS = 800;

const PLACEHOLDER = /\[pasted #(\d+): \d+ lines\]/g;

export function draftOf(text: string): Draft {
  return { text, cursor: text.length, pastes: [] };
}

export function insertText(d: Draft, text: string): Draft {
  return { ...d, text: d.text.slice(0, d.cursor) + text + d.text.slice(d.cursor), cursor: d.cursor + text.length };
}

/** A paste: inserted as is, or (when large) kept aside behind a `[pasted #n: N lines]` token. */
export function insertPaste(d: Draft, text: string): Draft {
  const lines = text.split('\n').length;
  if (lines <= PASTE_SUMMARY_LINES && text.length <= PASTE_SUMMARY_CHARS) return insertText(d, text);
  const n = d.pastes.length + 1;
  return { ...insertText(d, `[pasted #${n}: ${lines} lines]`), pastes: [...d.pastes, text] };
}

/** Delete before the cursor; a whole placeholder token goes at once. */
export function backspace(d: Draft): Draft {
  if (d.cursor === 0) return d;
  const before = d.text.slice(0, d.cursor);
  const token = /\[pasted #\d+: \d+ lines\]$/.exec(before);
  const from = token ? d.cursor - token[0].length : d.cursor - prevCharLength(before);
  return { ...d, text: d.text.slice(0, from) + d.text.slice(d.cursor), cursor: from };
}

export function deleteForward(d: Draft): Draft {
  if (d.cursor >= d.text.length) return d;
  const n = String.fromCodePoint(d.text.codePointAt(d.cursor)!).length;
  return { ...d, text: d.text.slice(0, d.cursor) + d.text.slice(d.cursor + n) };
}

export function moveLeft(d: Draft): Draft {
  return d.cursor === 0 ? d : { ...d, cursor: d.cursor - prevCharLength(d.text.slice(0, d.cursor)) };
}

export function moveRight(d: Draft): Draft {
  if (d.cursor >= d.text.length) return d;
  return { ...d, cursor: d.cursor + String.fromCodePoint(d.text.codePointAt(d.cursor)!).length };
}

export function lineStart(d: Draft): Draft {
  return { ...d, cursor: d.text.lastIndexOf('\n', d.cursor - 1) + 1 };
}

export function lineEnd(d: Draft): Draft {
  const end = d.text.indexOf('\n', d.cursor);
  return { ...d, cursor: end === -1 ? d.text.length : end };
}

/** Move to the same column of the line above / below; null at the first / last line. */
export function moveVertical(d: Draft, dir: -1 | 1): Draft | null {
  const start = d.text.lastIndexOf('\n', d.cursor - 1) + 1;
  const col = d.cursor - start;
  if (dir < 0) {
    if (start === 0) return null;
    const prevStart = d.text.lastIndexOf('\n', start - 2) + 1;
    return { ...d, cursor: Math.min(prevStart + col, start - 1) };
  }
  const end = d.text.indexOf('\n', d.cursor);
  if (end === -1) return null;
  const nextEnd = d.text.indexOf('\n', end + 1);
  return { ...d, cursor: Math.min(end + 1 + col, nextEnd === -1 ? d.text.length : nextEnd) };
}

/** Ctrl+W: delete the word before the cursor (and the spaces after it). */
export function deleteWordBack(d: Draft): Draft {
  const before = d.text.slice(0, d.cursor);
  const m = /\S*\s*$/.exec(before)!;
  const from = d.cursor - m[0].length;
  return { ...d, text: d.text.slice(0, from) + d.text.slice(d.cursor), cursor: from };
}

/** Ctrl+U: delete from the start of the line to the cursor. */
export function killToLineStart(d: Draft): Draft {
  const start = d.text.lastIndexOf('\n', d.cursor - 1) + 1;
  const from = start === d.cursor && start > 0 ? start - 1 : start;
  return { ...d, text: d.text.slice(0, from) + d.text.slice(d.cursor), cursor: from };
}

/** Ctrl+K: delete from the cursor to the end of the line. */
export function killToLineEnd(d: Draft): Draft {
  const end = d.text.indexOf('\n', d.cursor);
  const to = end === -1 ? d.text.length : end === d.cursor ? end + 1 : end;
  return { ...d, text: d.text.slice(0, d.cursor) + d.text.slice(to) };
}

/** The text to send: placeholders replaced by what was pasted. */
export function expandDraft(d: Draft): string {
  return d.text.replace(PLACEHOLDER, (token, n: string) => d.pastes[Number(n) - 1] ?? token);
}

export { EMPTY_DRAFT };

function prevCharLength(before: string): number {
  const last = before.codePointAt(before.length - 1)!;
  return last >= 0xdc00 && last <= 0xdfff && before.length >= 2 ? 2 : 1;
}
