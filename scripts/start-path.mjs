// What a start evaluates (docs/performance.md#start-up): the modules the entry reaches through
// static imports, from esbuild's metafile. Code reached only through `await import()` is
// evaluated at that import (esbuild's lazy module wrappers), so it costs a start nothing.
// scripts/build.mjs refuses a bundle whose start path holds code a start must not evaluate.

/**
 * What must stay off the start path (each reached through `await import()` only): the
 * commands other than the default one (src/cli/commands/index.ts loads the one that runs),
 * the durable engine's SDK, the model providers' SDKs, the MCP SDK, the Telegram client,
 * highlight.js, the TUI (loaded while the core composes).
 */
export const NOT_AT_START = [
  { pattern: /^src\/cli\/commands\/(?!index\.ts$|start\.ts$)/, why: 'a command other than start: loaded by the command table when it runs' },
  { pattern: /node_modules\/@restatedev\//, why: 'the Restate SDK: only `legion worker` and the engine use it' },
  { pattern: /node_modules\/(@anthropic-ai\/sdk|openai)\//, why: 'a provider SDK: imported at the first model call' },
  { pattern: /node_modules\/(@modelcontextprotocol\/sdk|grammy|highlight\.js)\//, why: 'the MCP SDK, the Telegram client or highlight.js: imported at their first use, after the first frame' },
  { pattern: /^components\//, why: 'the TUI: imported while the core composes' },
];

/**
 * Node built-ins no module on the start path may import statically (a start draws its first
 * frame without a request): HTTP, TLS and compression, which the providers' and the engine's
 * admin requests load at their first use (src/providers/http-modules.ts).
 */
export const BUILTINS_NOT_AT_START = [
  { pattern: /^(node:)?(http|https|http2|tls|zlib)$/, why: 'HTTP, TLS or compression: loaded at the first request (src/providers/http-modules.ts)' },
];

/** The inputs `entry` reaches through static imports (`import`, `require`), in the order found. */
export function startPath(metafile, entry) {
  const seen = new Set([entry]);
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.shift();
    for (const i of metafile.inputs[file]?.imports ?? []) {
      if (i.kind === 'dynamic-import' || i.external || seen.has(i.path)) continue;
      seen.add(i.path);
      queue.push(i.path);
    }
  }
  return [...seen];
}

/** One line per module on the start path that NOT_AT_START forbids (with the import chain to it). */
export function startPathViolations(metafile, entry) {
  const from = new Map([[entry, null]]);
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.shift();
    for (const i of metafile.inputs[file]?.imports ?? []) {
      if (i.kind === 'dynamic-import' || i.external || from.has(i.path)) continue;
      from.set(i.path, file);
      queue.push(i.path);
    }
  }
  const chain = (file) => {
    const out = [];
    for (let f = file; f !== null; f = from.get(f)) out.unshift(f);
    return out.join(' → ');
  };
  const lines = [];
  for (const rule of NOT_AT_START) {
    // The first module of each kind is enough to say what pulls it in.
    const hit = [...from.keys()].find((f) => rule.pattern.test(f));
    if (hit) lines.push(`${chain(hit)} (${rule.why})`);
  }
  for (const rule of BUILTINS_NOT_AT_START) {
    const hit = [...from.keys()].find((f) => (metafile.inputs[f]?.imports ?? []).some((i) => i.external && i.kind !== 'dynamic-import' && rule.pattern.test(i.path)));
    if (hit) lines.push(`${chain(hit)} → ${metafile.inputs[hit].imports.find((i) => i.external && i.kind !== 'dynamic-import' && rule.pattern.test(i.path)).path} (${rule.why})`);
  }
  return lines;
}
