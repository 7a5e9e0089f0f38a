import { appendFileSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { redact } from '../authz/redact';

export const MCP_LOG_MAX_BYTES = 1024 * 1024;
const MAX_LINE = 8 * 1024;

export interface ServerLog {
  readonly file: string;
  /** A chunk of the server's stderr; written by whole lines, each redacted. */
  write(chunk: string): void;
  /** A line of Legion's own (connect, crash, restart), timestamped. */
  note(line: string): void;
  /** Write what is held of an unfinished line. */
  flush(): void;
}

export const mcpLogFile = (legionDir: string, server: string): string =>
  join(legionDir, 'logs', `mcp-${server.replace(/[^a-zA-Z0-9_-]/g, '_')}.log`);

/**
 * `.legion/logs/mcp-<server>.log`: the server's stderr, line by line, secrets redacted
 * (`redact`: the given literal values, e.g. the server's env and header values and the
 * provider keys, and token shapes). Past `maxBytes` the file becomes `<file>.1` (one old
 * file kept). A write failure never reaches the server or the app.
 */
export function createServerLog(file: string, options: { readonly secrets: readonly string[]; readonly maxBytes?: number; readonly clock?: () => Date }): ServerLog {
  const maxBytes = options.maxBytes ?? MCP_LOG_MAX_BYTES;
  const clock = options.clock ?? (() => new Date());
  let pending = '';
  let size = -1;
  let broken = false;
  const append = (text: string): void => {
    if (broken) return;
    try {
      if (size < 0) {
        mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
        try { size = statSync(file).size; } catch { size = 0; }
      }
      if (size > 0 && size + text.length > maxBytes) {
        renameSync(file, `${file}.1`);
        size = 0;
      }
      appendFileSync(file, text, { mode: 0o600 });
      size += Buffer.byteLength(text);
    } catch {
      broken = true; // a full disk or a read-only workspace: the log stops, the server does not
    }
  };
  const line = (text: string): string => redact(text.length > MAX_LINE ? `${text.slice(0, MAX_LINE)}…` : text, options.secrets);
  return {
    file,
    write(chunk) {
      pending += chunk;
      const cut = pending.lastIndexOf('\n');
      if (cut < 0) {
        if (pending.length > MAX_LINE) { append(line(pending) + '\n'); pending = ''; }
        return;
      }
      const lines = pending.slice(0, cut).split('\n');
      pending = pending.slice(cut + 1);
      append(lines.map(line).join('\n') + '\n');
    },
    note(text) {
      append(`[legion ${clock().toISOString()}] ${line(text)}\n`);
    },
    flush() {
      if (pending) { append(line(pending) + '\n'); pending = ''; }
    },
  };
}
