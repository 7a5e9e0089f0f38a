import { isDeepStrictEqual } from 'node:util';
import { parseDocument, LineCounter, isMap, isSeq, type Document, type Node as YamlNode } from 'yaml';

/** One YAML file, parsed, able to say on which line a key path sits. */
export interface YamlSource {
  readonly file: string;
  readonly data: unknown;
  lineOf(path: readonly (string | number)[]): number | null;
}

export type YamlParse = { ok: true; source: YamlSource } | { ok: false; error: string };

/** A YAML text, the JSON of what `parseYamlSource` makes of it, and `lineOf` of every key path of the data (by `JSON.stringify(path)`). */
export interface ParsedYaml {
  readonly text: string;
  /** The file's path under the package's `config/` (`rules.yaml`), set by the build. */
  readonly name?: string;
  readonly json: string;
  readonly lines: Readonly<Record<string, number | null>>;
}

/**
 * The files shipped in `config/`, parsed when the bundle was built (scripts/build.mjs
 * defines `__LEGION_PARSED_YAML__`): start-up skips parsing them (~20–30 ms of a cold YAML
 * parser). Matched by exact text, so an edited file is parsed as usual. Absent under tsx.
 */
declare const __LEGION_PARSED_YAML__: readonly ParsedYaml[] | undefined;
const SHIPPED: readonly ParsedYaml[] = typeof __LEGION_PARSED_YAML__ === 'undefined' ? [] : __LEGION_PARSED_YAML__;

/** The names (relative to `config/`) of the YAML files the build carried; none under tsx. */
export function shippedYamlNames(): string[] {
  return SHIPPED.flatMap((p) => (p.name === undefined ? [] : [p.name]));
}

/** The text of a YAML file shipped in `config/` (`name` relative to it) as the build carried it; undefined under tsx. */
export function shippedYamlText(name: string): string | undefined {
  return SHIPPED.find((p) => p.name === name)?.text;
}

/**
 * Parse YAML text; a syntax error becomes `file:line: message` in one line.
 * A text found in `parsed` gives a copy of its data at once, and `lineOf` its recorded lines
 * (a path not recorded parses the text, once).
 */
export function parseYamlSource(text: string, file: string, parsed: readonly ParsedYaml[] = SHIPPED): YamlParse {
  const known = parsed.find((p) => p.text === text);
  if (known) {
    let document: { doc: Document; counter: LineCounter } | null = null;
    const lineOf = (path: readonly (string | number)[]): number | null => {
      const line = known.lines[JSON.stringify(path)];
      if (line !== undefined) return line;
      document ??= parseText(text);
      return lineOfPath(document.doc, document.counter, path);
    };
    return { ok: true, source: { file, data: JSON.parse(known.json) as unknown, lineOf } };
  }
  const { doc, counter } = parseText(text);
  const firstError = doc.errors[0];
  if (firstError) {
    const line = firstError.linePos?.[0]?.line ?? counter.linePos(firstError.pos[0]).line;
    const message = firstError.message.split('\n')[0];
    return { ok: false, error: `${file}:${line}: YAML syntax: ${message}` };
  }
  const data = doc.toJS() ?? {};
  return {
    ok: true,
    source: { file, data, lineOf: (path) => lineOfPath(doc, counter, path) },
  };
}

/**
 * What the bundle carries for one shipped file (scripts/build.mjs): null when the text does
 * not parse or its data does not survive a JSON round trip.
 */
export function preparseYaml(text: string, file: string): ParsedYaml | null {
  const parsed = parseYamlSource(text, file, []);
  if (!parsed.ok) return null;
  const { data, lineOf } = parsed.source;
  const json = JSON.stringify(data);
  if (json === undefined || !isDeepStrictEqual(JSON.parse(json), data)) return null;
  const lines: Record<string, number | null> = {};
  const walk = (value: unknown, path: (string | number)[]): void => {
    lines[JSON.stringify(path)] = lineOf(path);
    if (Array.isArray(value)) value.forEach((item, i) => walk(item, [...path, i]));
    else if (value !== null && typeof value === 'object') for (const [key, item] of Object.entries(value)) walk(item, [...path, key]);
  };
  walk(data, []);
  return { text, json, lines };
}

function parseText(text: string): { doc: Document; counter: LineCounter } {
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, prettyErrors: false, uniqueKeys: true });
  return { doc, counter };
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
