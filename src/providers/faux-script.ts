import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { parseYamlSource } from '../config/yaml-source';
import type { Message } from '../model/message';
import type { ProviderRequest } from './types';
import { ONE_SHOT } from '../storage/zod-validate';
import { deepFreeze } from '../storage/deep-freeze';

/**
 * The faux provider's script (YAML, `LEGION_FAUX_SCRIPT`, `providers.faux.script`).
 * A request is answered by the first entry of `replies`, in file order, that is not yet
 * consumed and matches it; the entry is then consumed (unless `repeat: true`). An entry is
 * a reply or a `oneOf` group of alternative replies (the first alternative that matches
 * answers, and the whole group is consumed). Matching is deterministic: it depends only on
 * the request and on which entries were consumed before.
 */
/**
 * The script's schemas, built at their first use, not as the module loads: a start with the
 * shipped demo script takes its parse from the start-up snapshot (`precompileShippedFauxScript`)
 * and builds none (~120 zod schemas fewer in every start's heap, docs/performance.md#the-start-up-snapshot).
 */
function buildSchemas() {
  const stopReason = z.enum(['end_turn', 'tool_use', 'max_tokens', 'stop_sequence', 'refusal', 'other']);

  const regexString = z.string().min(1).refine(
    (s) => {
      try {
        new RegExp(s, 'is');
        return true;
      } catch {
        return false;
      }
    },
    { message: 'not a valid regular expression' },
  );

  const reply = z
    .strictObject({
      /** Matches `request.meta.participantId`. */
      agent: z.string().min(1).optional(),
      /** Regex (case-insensitive, `.` spans lines) searched in the last input: the last message's text and tool results. */
      when: regexString.optional(),
      /** What the last message is: user text (`message`), tool results (`tool-result`), tool results with an error (`tool-error`). */
      on: z.enum(['message', 'tool-result', 'tool-error']).optional(),
      /** Only as the opening of a conversation (the request holds exactly one message). */
      first: z.boolean().optional(),
      /** `turn` (default), `triage` (the approval evaluator's requests) or `compaction` (summary requests, docs/context.md). */
      purpose: z.enum(['turn', 'triage', 'compaction']).optional(),
      text: z.string().optional(),
      toolCalls: z
        .array(z.strictObject({ name: z.string().min(1), input: z.record(z.string(), z.unknown()).default({}), id: z.string().min(1).optional() }))
        .optional(),
      usage: z
        .strictObject({
          inputTokens: z.number().int().min(0).optional(),
          outputTokens: z.number().int().min(0).optional(),
          cacheReadTokens: z.number().int().min(0).optional(),
          cacheWriteTokens: z.number().int().min(0).optional(),
        })
        .optional(),
      /** End with an error event (after any text) instead of `end`. */
      error: z
        .union([
          z.string().min(1),
          z.strictObject({ message: z.string().min(1), status: z.number().int().optional(), retryable: z.boolean().optional() }),
        ])
        .optional(),
      /** Default `tool_use` when there are tool calls, else `end_turn`. */
      stopReason: stopReason.optional(),
      /** Characters (code points) per text delta. */
      chunkSize: z.number().int().positive().optional(),
      /** Pause before each text delta and before the tool calls, in ms. */
      delayMs: z.number().int().min(0).optional(),
      /** Stay available after answering (a generic reply). */
      repeat: z.boolean().optional(),
    })
    .refine((r) => r.text !== undefined || (r.toolCalls?.length ?? 0) > 0 || r.error !== undefined, {
      message: 'a reply needs text, toolCalls or error',
    });

  const group = z.strictObject({ oneOf: z.array(reply).min(1), repeat: z.boolean().optional() });

  const script = z.strictObject({
    version: z.literal(1).default(1),
    /** Model name reported in usage events (default: the request's model). */
    model: z.string().min(1).optional(),
    defaults: z
      .strictObject({ chunkSize: z.number().int().positive().optional(), delayMs: z.number().int().min(0).optional() })
      .default({}),
    /** Text when nothing matches; `{{agent}}` etc. are filled in. */
    fallback: z.string().default('(faux) no scripted reply for {{agent}}'),
    /** Entries are validated one by one (a group when it has `oneOf`, else a reply) for precise errors. */
    replies: z.array(z.unknown()).default([]),
  });
  return { reply, group, script };
}

type FauxSchemas = ReturnType<typeof buildSchemas>;
let schemas: FauxSchemas | undefined;

export type FauxReply = z.infer<FauxSchemas['reply']>;
export type FauxEntry = FauxReply | z.infer<FauxSchemas['group']>;
export type FauxScript = Omit<z.infer<FauxSchemas['script']>, 'replies'> & { readonly replies: FauxEntry[]; readonly file: string };
export type FauxScriptLoad = { ok: true; script: FauxScript } | { ok: false; error: string };

/**
 * Scripts parsed while the start-up snapshot was built (`precompileShippedFauxScript`), by their
 * exact text: the shipped `config/demo-script.yaml`, which a demo start loads before its first
 * frame. Frozen; each load of that text gets its own copy, as a parse would give.
 */
const shippedScripts = new Map<string, Omit<FauxScript, 'file'>>();

/** Parse a shipped script with schemas of its own (not kept) and keep the result for loads of the same text (src/cli/snapshot-warm.ts). Returns whether it parsed. */
export function precompileShippedFauxScript(text: string, file: string): boolean {
  const parsed = parseWith(buildSchemas(), text, file);
  if (!parsed.ok) return false;
  const { file: _file, ...script } = parsed.script;
  shippedScripts.set(text, deepFreeze(structuredClone(script)));
  return true;
}

/** Parse and validate script text; errors are one line: `file:line: path: message`. */
export function parseFauxScript(text: string, file: string): FauxScriptLoad {
  const shipped = shippedScripts.get(text);
  if (shipped) return { ok: true, script: { ...structuredClone(shipped), file } };
  return parseWith((schemas ??= buildSchemas()), text, file);
}

function parseWith(schema: FauxSchemas, text: string, file: string): FauxScriptLoad {
  const parsed = parseYamlSource(text, file);
  if (!parsed.ok) return { ok: false, error: parsed.error };
  const fail = (error: z.ZodError, prefix: readonly (string | number)[]): FauxScriptLoad => {
    const issue = error.issues[0]!;
    const path = [...prefix, ...issue.path.filter((p): p is string | number => typeof p !== 'symbol')];
    if (issue.code === 'unrecognized_keys' && issue.keys[0]) path.push(issue.keys[0]);
    return { ok: false, error: `${file}:${parsed.source.lineOf(path) ?? 1}: ${path.join('.') || '(root)'}: ${issue.message}` };
  };
  const top = schema.script.safeParse(parsed.source.data, ONE_SHOT);
  if (!top.success) return fail(top.error, []);
  const replies: FauxEntry[] = [];
  for (const [index, raw] of top.data.replies.entries()) {
    const isGroup = raw !== null && typeof raw === 'object' && 'oneOf' in raw;
    const entry = isGroup ? schema.group.safeParse(raw, ONE_SHOT) : schema.reply.safeParse(raw, ONE_SHOT);
    if (!entry.success) return fail(entry.error, ['replies', index]);
    replies.push(entry.data);
  }
  return { ok: true, script: { ...top.data, replies, file } };
}

export async function loadFauxScript(path: string): Promise<FauxScriptLoad> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { ok: false, error: `${path}: cannot read the faux script${code === 'ENOENT' ? ' (no such file)' : `: ${(error as Error).message}`}` };
  }
  return parseFauxScript(text, path);
}

/** What a request offers to match against. */
export interface MatchInput {
  readonly agent: string | undefined;
  readonly purpose: 'turn' | 'triage' | 'compaction';
  readonly lastText: string;
  readonly firstText: string;
  readonly kind: 'message' | 'tool-result' | 'tool-error';
  readonly first: boolean;
}

export function matchInputOf(request: ProviderRequest): MatchInput {
  const msgs = request.messages;
  const last = msgs[msgs.length - 1];
  const results = last?.content.filter((b) => b.type === 'tool_result') ?? [];
  return {
    agent: request.meta?.participantId,
    purpose: request.meta?.purpose ?? 'turn',
    lastText: last ? inputText(last) : '',
    firstText: msgs[0] ? inputText(msgs[0]) : '',
    kind: results.length === 0 ? 'message' : results.some((r) => r.type === 'tool_result' && r.isError) ? 'tool-error' : 'tool-result',
    first: msgs.length === 1,
  };
}

function inputText(message: Message): string {
  return message.content
    .map((b) => (b.type === 'text' ? b.text : b.type === 'tool_result' ? b.content : ''))
    .filter((s) => s.length > 0)
    .join('\n');
}

export function replyMatches(reply: FauxReply, input: MatchInput): boolean {
  if (reply.agent !== undefined && reply.agent !== input.agent) return false;
  if ((reply.purpose ?? 'turn') !== input.purpose) return false;
  if (reply.first !== undefined && reply.first !== input.first) return false;
  if (reply.on === 'message' && input.kind !== 'message') return false;
  if (reply.on === 'tool-result' && input.kind === 'message') return false;
  if (reply.on === 'tool-error' && input.kind !== 'tool-error') return false;
  if (reply.when !== undefined && !new RegExp(reply.when, 'is').test(input.lastText)) return false;
  return true;
}

/** The reply for `input`, consuming its entry in `consumed` (indices into `script.replies`). */
export function pickReply(script: FauxScript, consumed: Set<number>, input: MatchInput): FauxReply | null {
  for (const [index, entry] of script.replies.entries()) {
    if (consumed.has(index)) continue;
    const reply = 'oneOf' in entry ? entry.oneOf.find((r) => replyMatches(r, input)) : replyMatches(entry, input) ? entry : undefined;
    if (!reply) continue;
    if (!entry.repeat) consumed.add(index);
    return reply;
  }
  return null;
}

/** Fill `{{agent}}`, `{{session}}`, `{{model}}`, `{{lastText}}`, `{{firstText}}` (long texts are cut). */
export function fillTemplate(text: string, vars: Readonly<Record<string, string>>): string {
  return text.replace(/\{\{\s*(\w+)\s*\}\}/g, (whole, name: string) => {
    const value = vars[name];
    if (value === undefined) return whole;
    return value.length > 600 ? `${value.slice(0, 600)}…` : value;
  });
}

/** `fillTemplate` over every string inside a JSON value. */
export function fillDeep(value: unknown, vars: Readonly<Record<string, string>>): unknown {
  if (typeof value === 'string') return fillTemplate(value, vars);
  if (Array.isArray(value)) return value.map((v) => fillDeep(v, vars));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillDeep(v, vars)]));
  }
  return value;
}
