import type { ElicitAnswer, ElicitParams } from './connection';

/**
 * Elicitation as a plain question to the user (docs/mcp.md, "Elicitation"): the server's
 * message plus its fields; the user's free-text answer becomes the form's content.
 */
export function elicitationQuestion(server: string, params: ElicitParams): string {
  const fields = fieldsOf(params.requestedSchema);
  const lines = [`MCP server "${server}" asks: ${params.message}`];
  if (fields.length) {
    lines.push('', 'Fields:');
    for (const f of fields) lines.push(`- ${f.name} (${f.type}${f.required ? ', required' : ''})${f.description ? `: ${f.description}` : ''}`);
    lines.push('', fields.length === 1
      ? `Answer with the value, or "decline".`
      : `Answer with a JSON object such as {"${fields[0]!.name}": …}, or one "name: value" per line, or "decline".`);
  } else {
    lines.push('', 'Answer "ok" to accept, or "decline".');
  }
  return lines.join('\n');
}

interface Field { readonly name: string; readonly type: string; readonly required: boolean; readonly description?: string }

function fieldsOf(schema: unknown): Field[] {
  if (typeof schema !== 'object' || schema === null) return [];
  const s = schema as { properties?: Record<string, { type?: unknown; description?: unknown; title?: unknown; enum?: unknown }>; required?: unknown };
  const required = Array.isArray(s.required) ? s.required : [];
  return Object.entries(s.properties ?? {}).map(([name, p]) => ({
    name,
    type: Array.isArray(p?.enum) ? `one of ${p.enum.map(String).join(' | ')}` : typeof p?.type === 'string' ? p.type : 'string',
    required: required.includes(name),
    ...(typeof p?.description === 'string' ? { description: p.description } : typeof p?.title === 'string' ? { description: p.title } : {}),
  }));
}

const DECLINE = /^\s*(decline|no|cancel|n)\s*\.?\s*$/i;

/** The user's answer as an elicitation result; `content` values are coerced to the schema's types. */
export function parseElicitationAnswer(answer: string, requestedSchema: unknown): ElicitAnswer {
  if (DECLINE.test(answer) || answer.trim() === '') return { action: 'decline' };
  const fields = fieldsOf(requestedSchema);
  let raw: Record<string, unknown> = {};
  const text = answer.trim();
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) raw = parsed as Record<string, unknown>;
    else if (fields.length === 1) raw = { [fields[0]!.name]: parsed };
  } catch {
    if (fields.length === 1) raw = { [fields[0]!.name]: text };
    else for (const line of text.split('\n')) {
      const m = /^\s*([^:=]+?)\s*[:=]\s*(.*)$/.exec(line);
      if (m) raw[m[1]!] = m[2];
    }
  }
  const content: Record<string, unknown> = {};
  for (const f of fields) if (f.name in raw) content[f.name] = coerce(raw[f.name], f.type);
  return { action: 'accept', content };
}

function coerce(value: unknown, type: string): unknown {
  if (typeof value !== 'string') return value;
  if (type === 'boolean') return /^(true|yes|y|1|on)$/i.test(value.trim());
  if (type === 'number' || type === 'integer') {
    const n = Number(value.trim());
    return Number.isFinite(n) ? (type === 'integer' ? Math.trunc(n) : n) : value;
  }
  return value;
}
