import type { Span } from '../text/line';

/**
 * Code highlighting, loaded after the first frame: highlight.js and its grammars cost
 * start-up time, and the first screen rarely needs them. Until loaded, code is unstyled;
 * `highlightVersion()` changes when it loads so cached lines are rebuilt.
 */
type Highlighter = (code: string, lang: string) => Span[][];

let highlighter: Highlighter | null = null;
let loading: Promise<void> | null = null;
let version = 0;

export function highlightVersion(): number {
  return version;
}

/** Load highlight.js (once); resolves when code blocks can be highlighted. */
export function loadHighlighter(): Promise<void> {
  loading ??= import('./highlight-core').then((m) => {
    highlighter = m.highlightLines;
    version += 1;
  });
  return loading;
}

/** One span list per source line: highlighted once loaded, plain before (and for unknown languages). */
export function highlightLines(code: string, lang: string): Span[][] {
  if (highlighter) return highlighter(code, lang);
  return code.split('\n').map((text) => [{ text, tone: 'code' }]);
}
