import { parseDocument, LineCounter, isMap, isSeq, type Document, type Node as YamlNode } from 'yaml';

/** One YAML file, parsed, able to say on which line a key path sits. */
export interface YamlSource {
  readonly file: string;
  readonly data: unknown;
  lineOf(path: readonly (string | number)[]): number | null;
}

export type YamlParse = { ok: true; source: YamlSource } | { ok: false; error: string };

/** Parse YAML text; a syntax error becomes `file:line: message` in one line. */
export function parseYamlSource(text: string, file: string): YamlParse {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const firstError = doc.errors[0];
  if (firstError) {
    const line = firstError.linePos?.[0]?.line ?? lineCounter.linePos(firstError.pos[0]).line;
    const message = firstError.message.split('\n')[0];
    return { ok: false, error: `${file}:${line}: YAML syntax: ${message}` };
  }
  const data = doc.toJS() ?? {};
  return {
    ok: true,
    source: { file, data, lineOf: (path) => lineOfPath(doc, lineCounter, path) },
  };
}

function lineOfPath(doc: Document, counter: LineCounter, path: readonly (string | number)[]): number | null {
  let node: unknown = doc.contents;
  let best: number | null = rangeLine(node, counter);
  for (const key of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => String((p.key as { value?: unknown } | null)?.value ?? p.key) === String(key));
      if (!pair) return best;
      best = rangeLine(pair.key, counter) ?? best;
      node = pair.value;
    } else if (isSeq(node) && typeof key === 'number') {
      node = node.items[key];
      best = rangeLine(node, counter) ?? best;
    } else {
      return best;
    }
  }
  return best;
}

function rangeLine(node: unknown, counter: LineCounter): number | null {
  const range = (node as YamlNode | null)?.range;
  return range ? counter.linePos(range[0]).line : null;
}
