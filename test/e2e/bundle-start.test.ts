import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/**
 * What start-up must not pay for (scripts/build.mjs, test/bench/startup.ts): the files the
 * entry loads before any `await import()` hold neither provider SDK, nor highlight.js, nor
 * zod's foreign locales, nor yoga's fetch path; the shipped YAML is pre-parsed.
 */
const ROOT = process.cwd();
const BUNDLE = resolve(ROOT, 'dist', 'legion.js');

function newest(path: string): number {
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((n) => newest(join(path, n))));
}

/** As in bundle-init.test.ts: build only when missing or stale (scripts/test.mjs built it). */
function ensureBundle(): void {
  let built = 0;
  try { built = statSync(BUNDLE).mtimeMs; } catch { /* not built */ }
  if (built > 0 && process.env.LEGION_TEST === '1') return;
  const sources = Math.max(...['src', 'components', 'bin', 'config', 'scripts', 'package.json'].map((p) => newest(resolve(ROOT, p))));
  if (built >= sources) return;
  const r = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(r.status, 0, `build failed: ${r.stderr}`);
}

/** The files reached from `file` through static imports only (`import … from "./x.js"`), itself included. */
function staticGraph(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  // Static: `import{a}from"./chunks/x.js"` or `import"./x.js"`; dynamic `import("./x.js")` is not followed.
  for (const m of text.matchAll(/\bimport\s*(?:[\w$*{}\s,]*?\s*from\s*)?["'](\.{1,2}\/[^"']+)["']/g)) staticGraph(resolve(dirname(file), m[1]!), seen);
  for (const m of text.matchAll(/\bexport\s*(?:\*|\{[^}]*\})\s*from\s*["'](\.{1,2}\/[^"']+)["']/g)) staticGraph(resolve(dirname(file), m[1]!), seen);
  return seen;
}

test('bundle start path: the provider SDKs, highlight.js and zod locales load only on demand', () => {
  ensureBundle();
  const entryGraph = staticGraph(BUNDLE);
  const startTui = [...readFileSync(BUNDLE, 'utf8').matchAll(/import\(["'](\.\/chunks\/start-tui-[^"']+)["']\)/g)];
  assert.equal(startTui.length, 1, 'the entry imports the TUI on demand');
  const tui = staticGraph(resolve(dirname(BUNDLE), startTui[0]![1]!));
  const runTui = [...readFileSync(resolve(dirname(BUNDLE), startTui[0]![1]!), 'utf8').matchAll(/import\(["'](\.\/run-tui-[^"']+)["']\)/g)];
  assert.equal(runTui.length, 1, 'start-tui imports the screen on demand');
  const screen = staticGraph(resolve(dirname(BUNDLE), 'chunks', runTui[0]![1]!.slice(2)));
  const startFiles = new Set([...entryGraph, ...tui, ...screen]);
  const text = [...startFiles].map((f) => readFileSync(f, 'utf8')).join('\n');
  assert.ok(text.includes('createRoot') || text.includes('createContainer'), 'the screen (React) is on the start path');
  assert.doesNotMatch(text, /api\.anthropic\.com\/v1|anthropic-version/, 'the Anthropic SDK is not on the start path');
  assert.doesNotMatch(text, /OPENAI_ORG_ID|openai-organization/i, 'the OpenAI SDK is not on the start path');
  assert.doesNotMatch(text, /registerLanguage\("typescript"|hljs-/, 'highlight.js is not on the start path');
  assert.doesNotMatch(text, /Ungültige Eingabe|Nieprawidłow/, "zod's foreign locales are not bundled");
  assert.match(text, /__legionWidths/, 'string-width is patched');
  assert.match(text, /Buffer\.from\(H\.slice\(37\),"base64"\)/, 'yoga decodes its WebAssembly without fetch');
  assert.match(text, /claude-sonnet-5-5/, 'the shipped YAML is pre-parsed into the start path');
});

test('bundle start path: `legion --version` and `legion rules list` work from the split bundle', () => {
  ensureBundle();
  const version = spawnSync(process.execPath, [BUNDLE, '--version'], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(version.status, 0, version.stderr);
  assert.match(version.stdout, /^legion \d+\.\d+\.\d+/);
  const rules = spawnSync(process.execPath, [BUNDLE, 'rules', 'list', '--cwd', ROOT], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(rules.status, 0, rules.stderr);
  assert.match(rules.stdout, /config[\\/]rules\.yaml\n\s+\d+\s+\S+/, 'rules keep their source lines');
});
