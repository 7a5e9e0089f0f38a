import { parseYamlSource } from '../config/yaml-source';
import { isPlainObject } from '../config/merge';

/** A Markdown file with YAML front matter (`---` lines around it), as Claude Code's agent and skill files are. */
export type FrontMatter =
  | { readonly ok: true; readonly data: Record<string, unknown>; readonly body: string; readonly lineOf: (key: string) => number }
  | { readonly ok: false; readonly error: string };

/** Split and parse; the error is one line naming the file (and the line when YAML says it). */
export function parseFrontMatter(text: string, file: string): FrontMatter {
  const source = text.replace(/^\uFEFF/, '').replace(/\r\n/g, '\n');
  if (!source.startsWith('---\n')) return { ok: false, error: `${file}:1: no front matter (the file must start with a "---" line, then name: and description:, then "---")` };
  const end = source.indexOf('\n---', 3);
  if (end === -1) return { ok: false, error: `${file}: the front matter has no closing "---" line` };
  const yaml = source.slice(4, end + 1);
  const afterMarker = source.indexOf('\n', end + 4);
  const body = afterMarker === -1 ? '' : source.slice(afterMarker + 1);
  const parsed = parseYamlSource(yaml, file, []);
  if (!parsed.ok) return { ok: false, error: parsed.error.replace(/:(\d+):/, (_m, n: string) => `:${Number(n) + 1}:`) };
  const data = parsed.source.data;
  if (!isPlainObject(data)) return { ok: false, error: `${file}:2: the front matter must be a mapping (name: …, description: …)` };
  return { ok: true, data, body: body.trim(), lineOf: (key) => (parsed.source.lineOf([key]) ?? 1) + 1 };
}
