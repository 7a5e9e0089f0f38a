import '../../helpers/own-home';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { tightenTree } from '../../../src/storage/private-mode';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, type CliRun } from '../../helpers/cli';
import { APP_DIR, listFiles } from '../../helpers/crash-workspace';
import { trustWorkspace } from '../../helpers/trust';

/**
 * Config and files on disk (issue 9): a malformed or truncated config, rules file, participant,
 * run.json or marker stops `legion run` (through `main()`) with one line naming the file and a
 * non-zero exit, and changes no byte under `.legion/`. Damage the app can live with (a broken
 * line in a session or the approvals, a bad prices file, a damaged todo list) is one warning
 * line naming the file; the run goes on, and the damaged file is never rewritten: only appended
 * to, or left alone.
 */
const SCRIPT = `version: 1
replies:
  - { when: "todo", toolCalls: [{ name: todo_write, input: { todos: [{ id: "1", content: "x", status: pending }] } }] }
  - { on: tool-error, repeat: true, text: "todo failed: {{lastText}}" }
  - { repeat: true, text: "fine" }
`;

let base: string;
let runId: string;
before(async () => {
  base = await mkdtemp(join(tmpdir(), 'legion-files-'));
  await writeFile(join(base, 'script.yaml'), SCRIPT);
  // ur-agent holds todo_write; a first run leaves a session, a ledger, run.json, approvals.
  const first = await runCli(['run', 'hello'], { cwd: base, env: envFor(base), appDir: APP_DIR });
  assert.equal(first.code, 0, first.stderr);
  await writeFile(join(base, '.legion', 'runs', (runId = (await readdir(join(base, '.legion', 'runs')))[0]!), 'approvals.jsonl'), '');
});
after(() => rm(base, { recursive: true, force: true }));

function envFor(dir: string): Record<string, string> {
  return { HOME: dir, LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: join(dir, 'script.yaml') };
}

async function snapshot(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const f of await listFiles(join(dir, '.legion'))) out.set(f, await readFile(join(dir, '.legion', f), 'utf8'));
  return out;
}

/** Copy the base workspace, damage it, run `legion run <message>`; returns the run and the snapshots. */
async function damaged(damage: (legion: string) => Promise<void>, message = 'again'): Promise<{ r: CliRun; before: Map<string, string>; after: Map<string, string>; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'legion-files-case-'));
  await cp(base, dir, { recursive: true });
  await writeFile(join(dir, 'script.yaml'), SCRIPT);
  await damage(join(dir, '.legion'));
  await trustWorkspace(dir, envFor(dir)); // a copy: the marker of base does not verify here (docs/workspace-trust.md)
  // Damaged files stay private like Legion's own, so the only warnings are about the damage.
  await tightenTree(join(dir, '.legion'));
  const beforeSnap = await snapshot(dir);
  const r = await runCli(['run', message], { cwd: dir, env: envFor(dir), appDir: APP_DIR });
  const afterSnap = await snapshot(dir);
  await rm(dir, { recursive: true, force: true });
  return { r, before: beforeSnap, after: afterSnap, dir };
}

const half = (text: string): string => text.slice(0, Math.floor(text.length / 2));
const cutInHalf = (file: string) => async (legion: string): Promise<void> => {
  const path = join(legion, file.replace('<run>', runId));
  await writeFile(path, half(await readFile(path, 'utf8')));
};

function assertOneLine(r: CliRun, dir: string, file: string, pattern?: RegExp, prefix = 'legion: '): void {
  const text = r.stderr.replaceAll(dir, '<ws>');
  assert.equal(text.split('\n').length, 2, `one line: ${text}`);
  assert.ok(text.startsWith(`${prefix}<ws>/.legion/${file.replace('<run>', runId)}`), `names the file: ${text}`);
  if (pattern) assert.match(text, pattern);
  assert.doesNotMatch(text, /\n\s+at |TypeError|ReferenceError/, 'no stack trace');
}

const FATAL: Array<{ name: string; file: string; damage: (legion: string) => Promise<void>; says: RegExp }> = [
  { name: 'config.yaml with a YAML syntax error', file: 'config.yaml', damage: (l) => writeFile(join(l, 'config.yaml'), 'runtime:\n  maxDepth: [1,\n'), says: /config\.yaml:\d+: YAML syntax/ },
  {
    name: 'config.yaml cut in half', file: 'config.yaml', says: /config\.yaml:\d+: /,
    damage: async (l) => writeFile(join(l, 'config.yaml'), half('providers:\n  idleTimeoutMs: 300\n  maxRetries: 1\nruntime:\n  maxIterations: 5\n')),
  },
  { name: 'config.yaml with a wrong value', file: 'config.yaml', damage: (l) => writeFile(join(l, 'config.yaml'), 'providers:\n  maxRetries: lots\n'), says: /config\.yaml:2: providers\.maxRetries: / },
  { name: 'rules.yaml with a YAML syntax error', file: 'rules.yaml', damage: (l) => writeFile(join(l, 'rules.yaml'), 'version: 1\nrules:\n  - id: x\n    decision: [allow\n'), says: /rules\.yaml:\d+: YAML syntax/ },
  {
    name: 'rules.yaml cut in half', file: 'rules.yaml', says: /rules\.yaml:3: rule no-rm: missing "tool"/,
    damage: (l) => writeFile(join(l, 'rules.yaml'), half('version: 1\nrules:\n  - id: no-rm\n    decision: deny\n    tool: shell\n    match: { command: { regex: "rm .*" } }\n')),
  },
  { name: 'ur-agent.json cut in half', file: 'collective/participants/ur-agent.json', damage: cutInHalf('collective/participants/ur-agent.json'), says: /not valid JSON .*the file is damaged/ },
  { name: 'user.json cut in half', file: 'collective/participants/user.json', damage: cutInHalf('collective/participants/user.json'), says: /not valid JSON/ },
  { name: 'an empty participant file', file: 'collective/participants/resource-agent.json', damage: (l) => writeFile(join(l, 'collective/participants/resource-agent.json'), ''), says: /not valid JSON/ },
  {
    name: 'a participant file of the wrong shape', file: 'collective/participants/resource-agent.json', says: /resource-agent\.json: /,
    damage: (l) => writeFile(join(l, 'collective/participants/resource-agent.json'), '{"id": "resource-agent", "kind": "robot"}'),
  },
  { name: 'run.json cut in half', file: 'runs/<run>/run.json', damage: cutInHalf('runs/<run>/run.json'), says: /not valid JSON .*restore it, or start a new run with --new$/m },
  { name: 'the legion.json marker cut in half', file: 'legion.json', damage: cutInHalf('legion.json'), says: /not valid JSON/ },
];

for (const c of FATAL) {
  test(`damaged on disk, fatal: ${c.name} → one line naming the file, exit 1, no byte changed`, async () => {
    const { r, before: b, after: a, dir } = await damaged(c.damage);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stdout, '');
    assertOneLine(r, dir, c.file, c.says);
    assert.deepEqual(a, b, 'nothing under .legion/ was written');
  });
}

/** Every file is unchanged, except append-only files, whose old bytes must start the new content. */
function assertOnlyAppended(b: Map<string, string>, a: Map<string, string>): void {
  for (const [file, old] of b) {
    const now = a.get(file);
    assert.ok(now !== undefined, `${file} still exists`);
    if (file.endsWith('.jsonl')) assert.ok(now.startsWith(old), `${file} was appended to, never rewritten`);
    // The usage totals are rewritten whole (atomically) as the run counts on.
    else if (file.endsWith('usage.json')) assert.doesNotThrow(() => JSON.parse(now), `${file} is whole`);
    else if (!file.endsWith('run.json')) assert.equal(now, old, `${file} unchanged`);
  }
}

test('damaged on disk, non-fatal: garbage in the middle of a session → a warning with file:line, the turn runs, the line stays', async () => {
  const session = `runs/<run>/sessions/session-user__ur-agent__default.jsonl`;
  const { r, before: b, after: a, dir } = await damaged(async (l) => {
    const path = join(l, session.replace('<run>', runId));
    const lines = (await readFile(path, 'utf8')).split('\n');
    lines.splice(1, 0, 'garbage }{ not json');
    await writeFile(path, lines.join('\n'));
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'fine\n');
  assertOneLine(r, dir, session, /session-user__ur-agent__default\.jsonl:2: not valid JSON/, 'legion: warning: ');
  assertOnlyAppended(b, a);
});

test('damaged on disk, non-fatal: broken approvals lines → one warning per line naming the file, the run goes on', async () => {
  const file = 'runs/<run>/approvals.jsonl';
  const { r, before: b, after: a, dir } = await damaged((l) => writeFile(join(l, file.replace('<run>', runId)), 'garbage\n{"kind":"request"}\n'));
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stderr.replaceAll(dir, '<ws>').trim().split('\n');
  assert.equal(lines.length, 2, r.stderr);
  lines.forEach((line, i) => assert.ok(line.startsWith(`legion: warning: <ws>/.legion/runs/${runId}/approvals.jsonl:${i + 1}: `), line));
  assertOnlyAppended(b, a);
});

test('damaged on disk, non-fatal: a truncated models.yaml → costs are not shown, one warning naming the file', async () => {
  const { r, before: b, after: a, dir } = await damaged((l) => writeFile(join(l, 'models.yaml'), 'models:\n  foo:\n    input: [3,\n'));
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr.replaceAll(dir, '<ws>'), /^legion: warning: <ws>\/\.legion\/models\.yaml:\d+: .*\(costs are not shown\)\n$/);
  assertOnlyAppended(b, a);
});

test('damaged on disk, non-fatal: todos.json cut in half → the todo tool fails naming the file, which is not overwritten', async () => {
  const file = 'runs/<run>/todos.json';
  const { r, before: b, after: a } = await damaged(async (l) => writeFile(join(l, file.replace('<run>', runId)), '{"version": 1, "partic'), 'add a todo');
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^todo failed: .*todos\.json is damaged \(not valid JSON\); fix or delete it\n$/);
  assert.equal(a.get(file.replace('<run>', runId)), '{"version": 1, "partic');
  assertOnlyAppended(b, a);
});

test('damaged on disk, non-fatal: a garbage run lock → taken over with one warning, released at exit', async () => {
  const file = 'runs/<run>/lock';
  const { r, before: b, after: a, dir } = await damaged((l) => writeFile(join(l, file.replace('<run>', runId)), '{"pid": 12'));
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr.replaceAll(dir, '<ws>'), `legion: warning: took over the lock of run ${runId} (the lock file was unreadable)\n`);
  assert.equal(a.has(file.replace('<run>', runId)), false, 'the lock is gone after the run');
  b.delete(file.replace('<run>', runId));
  assertOnlyAppended(b, a);
});
