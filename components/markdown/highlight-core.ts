import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import type { Span, Tone } from '../text/line';

// A curated set of languages keeps start-up fast (the full highlight.js is ~190 grammars).
const LANGUAGES = { bash, c, cpp, css, diff, go, java, javascript, json, markdown, python, rust, sql, typescript, xml, yaml };
for (const [name, grammar] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, grammar);

const TONES: Readonly<Record<string, Tone>> = {
  keyword: 'keyword', built_in: 'type', type: 'type', literal: 'number', number: 'number',
  string: 'string', regexp: 'string', symbol: 'string', comment: 'comment', doctag: 'comment', quote: 'comment',
  title: 'title', 'title.function': 'title', 'title.class': 'type', function: 'title', section: 'heading',
  attr: 'attr', attribute: 'attr', variable: 'attr', params: 'attr', meta: 'comment', tag: 'keyword', name: 'keyword',
  addition: 'ok', deletion: 'error', property: 'attr', selector: 'keyword', 'selector-tag': 'keyword',
};

const ENTITIES: Readonly<Record<string, string>> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#x27;': "'", '&#39;': "'" };
const decode = (s: string): string => s.replace(/&(?:amp|lt|gt|quot|#x27|#39);/g, (e) => ENTITIES[e] ?? e);

function isKnownLanguage(lang: string): boolean {
  return lang !== '' && hljs.getLanguage(lang) !== undefined;
}

/**
 * Highlight `code` in `lang` into one span list per source line. Unknown languages come back
 * unstyled (no auto-detection: it is slow and often wrong on short snippets).
 * Loaded on demand through `./highlight` (it costs start-up time).
 */
export function highlightLines(code: string, lang: string): Span[][] {
  const sourceLines = code.split('\n');
  if (!isKnownLanguage(lang)) return sourceLines.map((text) => [{ text, tone: 'code' }]);
  let html: string;
  try {
    html = hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
  } catch {
    return sourceLines.map((text) => [{ text, tone: 'code' }]);
  }
  const out: Span[][] = [[]];
  const stack: (Tone | undefined)[] = [];
  const emit = (raw: string): void => {
    const text = decode(raw);
    const parts = text.split('\n');
    parts.forEach((part, i) => {
      if (i > 0) out.push([]);
      if (part !== '') out[out.length - 1]!.push({ text: part, tone: stack.findLast((t) => t !== undefined) ?? 'code' });
    });
  };
  const TAG = /<span class="([^"]*)">|<\/span>/g;
  let last = 0;
  for (const match of html.matchAll(TAG)) {
    emit(html.slice(last, match.index));
    last = match.index! + match[0].length;
    if (match[1] !== undefined) {
      const cls = match[1].split(' ')[0]!.replace(/^hljs-/, '').replace(/_$/, '');
      stack.push(TONES[cls] ?? TONES[cls.split('.')[0]!]);
    } else {
      stack.pop();
    }
  }
  emit(html.slice(last));
  return out;
}
