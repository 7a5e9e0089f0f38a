/**
 * The model of the day bench (test/bench/day.ts): a local Anthropic Messages API (`POST
 * /v1/messages`, server-sent events, what the real SDK parses) in a process of its own, so the
 * bench's CPU figures hold only Legion's work. Deterministic from the request alone:
 * - a request that offers no tools is a compaction summary request: a short summary;
 * - a request whose last message carries a tool result: the turn's answer,
 *   `DONE <tag>` (the tag is the `[t…]` or `[w…]` of the user message that started the turn);
 * - otherwise a tool call among the tools offered: `file_write` of 2–8 kB into
 *   `notes/<agent>-<n>.md` (even tags) or `file_read` of one of the seeded 2–8 kB files (odd);
 *   with neither tool offered, the answer at once.
 * A request larger than the window (estimated as Legion's bench estimates it: characters ÷ 4)
 * is refused with Anthropic's "prompt is too long" 400. `GET /stats` answers the request sizes
 * and the counts. argv[2]: `{ "window": N }`. Prints `{"port":N}` once listening; exits when
 * stdin closes.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The window requests are refused over (argv[2] when this file runs as the server). */
let WINDOW = Infinity;

/** Deterministic text of `bytes` characters (lines of records: what a real file read returns). */
export function dayFileText(seed: number, bytes: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line = `record ${seed}.${String(i).padStart(4, '0')}: value=${(i * 7919 + seed) % 10007} status=${(i + seed) % 3 === 0 ? 'ok' : 'pending'}`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join('\n').slice(0, bytes);
}

/** 2–8 kB, varied by the tag. */
export const daySize = (n: number): number => 2048 + ((n * 2654435761) >>> 0) % 6145;

interface Body { system?: unknown; messages?: Array<{ role: string; content: unknown }>; tools?: Array<{ name: string }> }

const stats = { requests: 0, summaries: 0, toolCalls: 0, answers: 0, overflows: 0, sizes: [] as number[] };

function sse(events: Array<{ event: string; data: unknown }>): string {
  return events.map((e) => `event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`).join('');
}

function stream(input: number, blocks: Array<{ text: string } | { tool: { id: string; name: string; input: unknown } }>): string {
  const events: Array<{ event: string; data: unknown }> = [{
    event: 'message_start',
    data: { type: 'message_start', message: { id: `msg_${stats.requests}`, type: 'message', role: 'assistant', model: 'day-model', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: input, output_tokens: 1 } } },
  }];
  let tool = false;
  blocks.forEach((b, index) => {
    if ('text' in b) {
      events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } } });
      // A few deltas per answer: the attached front ends see text stream.
      for (let at = 0; at < b.text.length; at += 24) events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text: b.text.slice(at, at + 24) } } });
      events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
    } else {
      tool = true;
      const json = JSON.stringify(b.tool.input);
      events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'tool_use', id: b.tool.id, name: b.tool.name, input: {} } } });
      for (let at = 0; at < json.length; at += 2048) events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: json.slice(at, at + 2048) } } });
      events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
    }
  });
  events.push({ event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: tool ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 40 } } });
  events.push({ event: 'message_stop', data: { type: 'message_stop' } });
  return sse(events);
}

const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((b: { type?: string; text?: string }) => (b.type === 'text' ? b.text ?? '' : '')).join('') : '';
const hasToolResult = (content: unknown): boolean => Array.isArray(content) && content.some((b: { type?: string }) => b.type === 'tool_result');

function answer(body: Body): { status: number; text: string; type: string } {
  stats.requests += 1;
  const tokens = Math.ceil((JSON.stringify(body.system ?? '').length + JSON.stringify(body.messages ?? []).length) / 4);
  const tools = (body.tools ?? []).map((t) => t.name);
  if (tools.length === 0) {
    stats.summaries += 1;
    return { status: 200, type: 'text/event-stream', text: stream(tokens, [{ text: 'SUMMARY: the user asks for notes to be read and written, turn after turn; each was done and answered. Nothing is open.' }]) };
  }
  stats.sizes.push(tokens);
  if (tokens > WINDOW) {
    stats.overflows += 1;
    return { status: 400, type: 'application/json', text: JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: `prompt is too long: ${tokens} tokens > ${WINDOW} maximum` } }) };
  }
  const messages = body.messages ?? [];
  const last = messages.at(-1);
  // The turn's tag: the last user message with text (not a tool result) that carries one.
  let tag = '';
  for (let i = messages.length - 1; i >= 0 && !tag; i--) {
    const m = messages[i]!;
    if (m.role === 'user') tag = /\[([tw][\w.-]+)\]/.exec(textOf(m.content))?.[1] ?? '';
  }
  const n = Number(/(\d+)$/.exec(tag)?.[1] ?? stats.requests);
  if (last && hasToolResult(last.content)) {
    stats.answers += 1;
    return { status: 200, type: 'text/event-stream', text: stream(tokens, [{ text: `DONE ${tag}: the notes are in order; nothing else to do for this request.` }]) };
  }
  const write = n % 2 === 0 && tools.includes('file_write');
  const read = !write && tools.includes('file_read');
  if (!write && !read) {
    stats.answers += 1;
    return { status: 200, type: 'text/event-stream', text: stream(tokens, [{ text: `DONE ${tag}: answered without a tool.` }]) };
  }
  stats.toolCalls += 1;
  const id = `toolu_${stats.requests}`;
  const input = write
    ? { path: `notes/${tag.replace(/[^\w-]/g, '-')}.md`, content: dayFileText(n, daySize(n)) }
    : { path: `seed/file-${n % 16}.txt` };
  return { status: 200, type: 'text/event-stream', text: stream(tokens, [{ text: write ? 'Writing the notes.' : 'Reading the file.' }, { tool: { id, name: write ? 'file_write' : 'file_read', input } }]) };
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  if (req.method === 'GET' && req.url === '/stats') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(stats));
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let body: Body = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Body;
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'not JSON' } }));
      return;
    }
    const out = answer(body);
    res.writeHead(out.status, { 'content-type': out.type, 'cache-control': 'no-cache' });
    res.end(out.text);
  });
}

if (process.argv[1] && /day-model\.ts$/.test(process.argv[1])) {
  WINDOW = (JSON.parse(process.argv[2] ?? '{}') as { window: number }).window;
  const server = createServer(handle);
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => { server.closeAllConnections(); server.close(() => process.exit(0)); });
}
