import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stringify } from 'yaml';
import { parseRuleSources } from '../../../../src/authz/rules/load';
import { evaluateRules, ruleMatchesCall, type RuleQuery } from '../../../../src/authz/rules/evaluate';
import { candidateMask, candidateMaskInto } from '../../../../src/authz/rules/rule-index';
import { allowCandidates, candidateRules } from '../../../../src/authz/rules/prefix-index';
import { argvText, parsePlain } from '../../../../src/authz/rules/shell-plain';
import type { CompiledRule } from '../../../../src/authz/rules/compile';
import type { RuleSet } from '../../../../src/authz/rules/rule-set';
import { normalizeRulePath } from '../../../../src/authz/rules/paths';
import { isFileTool } from '../../../../src/authz/rules/known-tools';
import { prng } from '../../../helpers/prng';

/**
 * The rule index (rule-index.ts) may only skip rules that cannot match: the indexed
 * evaluation must say exactly what testing every rule in file order says, over random rule
 * sets and calls built from the same words in several cases and spellings (ASCII case
 * folding, Kelvin sign and long s, which fold differently, a value as an array for strict rules).
 */
const SEED = Number(process.env.LEGION_PROPERTY_SEED ?? 20261127);
const ITERATIONS = Number(process.env.LEGION_PROPERTY_ITERATIONS ?? 300);
const ROOT = '/ws';

const WORDS = ['src', 'SRC', 'Src', 'docs', 'gen-12', 'GEN-12', '.env', 'ſrc', 'key', 'KEY', '\u212Aey', 'ab', 'a b', 'ü', 'x'];
const EXTS = ['', '.ts', '.TS', '.md', '.env'];
const TOOLS = ['file_read', 'file_write', 'grep', 'communicator', 'mcp__x__do'];

const pick = <T>(rand: () => number, items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;

function randomPath(rand: () => number): string {
  const n = 1 + Math.floor(rand() * 3);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) parts.push(pick(rand, WORDS));
  return parts.join('/') + pick(rand, EXTS);
}

function randomPattern(rand: () => number, field: string): unknown {
  const word = pick(rand, WORDS).replace(/[*?[\]{}\\]/g, '');
  const other = pick(rand, WORDS);
  const escaped = word.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
  const isPath = field === 'path';
  const globs = isPath
    ? [`${word}/**`, `**/${word}/**`, `**/*${pick(rand, EXTS) || '.ts'}`, `${word}/*${pick(rand, EXTS)}`, `**/${word}*`, '**', `${word}`, `{${word},${other}}/**`]
    : [`${word}*`, `*${word}*`, word, `${word}?${other}`, '*'];
  const kind = rand();
  if (kind < 0.6) return pick(rand, globs);
  if (kind < 0.8) return [pick(rand, globs), pick(rand, globs)];
  return { regex: pick(rand, [`${escaped}.*`, `.*${escaped}`, `(${escaped}|${other.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')})/.*`, `[a-z]+`, `.*`]) };
}

function randomRules(rand: () => number, n: number): Record<string, unknown>[] {
  const rules: Record<string, unknown>[] = [];
  for (let i = 0; i < n; i++) {
    const tool = pick(rand, TOOLS);
    const field = tool.startsWith('file_') || tool === 'grep' ? 'path' : tool === 'communicator' ? 'targetId' : 'thing';
    const match: Record<string, unknown> = { [field]: randomPattern(rand, field) };
    if (tool === 'grep' && rand() < 0.3) match.pattern = randomPattern(rand, 'pattern');
    const rule: Record<string, unknown> = { id: `r${i}`, decision: pick(rand, ['allow', 'allow', 'ask', 'deny']), tool, match };
    if (rand() < 0.2) rule.participants = [pick(rand, ['agent-a', 'qa-*'])];
    if (rand() < 0.05) rule.fallback = true, (rule.decision = pick(rand, ['ask', 'deny']));
    rules.push(rule);
  }
  return rules;
}

function randomCall(rand: () => number): RuleQuery {
  const toolName = pick(rand, TOOLS);
  const participantId = pick(rand, ['agent-a', 'qa-1']);
  const value = (): unknown => (rand() < 0.1 ? [randomPath(rand), randomPath(rand)] : rand() < 0.05 ? undefined : randomPath(rand));
  const spell = (p: unknown): unknown => (typeof p === 'string' ? pick(rand, [p, `./${p}`, `${ROOT}/${p}`, `docs/../${p}`]) : p);
  const input: Record<string, unknown> =
    toolName === 'communicator' ? { targetId: value(), message: 'hi' } : toolName === 'mcp__x__do' ? { thing: value() } : { path: spell(value()) };
  if (toolName === 'grep') input.pattern = value();
  return { toolName, input, participantId, workspaceRoot: ROOT };
}

function load(rules: Record<string, unknown>[]): RuleSet {
  const loaded = parseRuleSources([{ file: 'rules.yaml', text: stringify({ version: 1, rules }) }]);
  if (!loaded.ok) throw new Error(loaded.error);
  return loaded.ruleSet;
}

/** What the rules say without any index: each tier in file order, every rule tested. */
function unindexed(ruleSet: RuleSet, query: RuleQuery): { decision: string | null; ruleId: string | null; fallback: string | null } {
  const tiers = ruleSet.tiersFor(query.toolName);
  const first = (rules: readonly CompiledRule[]) => rules.find((r) => ruleMatchesCall(r, query)) ?? null;
  const found = first(tiers.deny) ?? first(tiers.ask) ?? first(tiers.allow);
  return { decision: found?.decision ?? null, ruleId: found?.id ?? null, fallback: found ? null : (first(tiers.fallback)?.id ?? null) };
}

test(`property: the indexed evaluation decides exactly as testing every rule does (seed ${SEED}, ${ITERATIONS} rule sets)`, () => {
  const rand = prng(SEED);
  let skipped = 0;
  for (let i = 0; i < ITERATIONS; i++) {
    const ruleSet = load(randomRules(rand, 20 + Math.floor(rand() * 80)));
    for (let c = 0; c < 20; c++) {
      const query = randomCall(rand);
      const got = evaluateRules(ruleSet, query);
      const want = unindexed(ruleSet, query);
      const context = `set ${i} call ${c}: ${query.toolName} ${JSON.stringify(query.input)} as ${query.participantId}`;
      assert.deepEqual({ decision: got.decision, ruleId: got.ruleId, fallback: got.fallback?.ruleId ?? null }, want, context);
      // Stronger than the first match: no rule the index leaves out matches at all.
      const tiers = ruleSet.tiersFor(query.toolName);
      for (const rules of [tiers.deny, tiers.ask, tiers.allow]) {
        const mask = candidateMask(rules, lookupOf(query));
        rules.forEach((rule, r) => {
          if (mask[r]) return;
          skipped++;
          assert.equal(ruleMatchesCall(rule, query), false, `${context}: ${rule.id} ${JSON.stringify(rule.spec)} left out but matches`);
        });
      }
    }
  }
  // Not vacuous: the index does leave rules out.
  assert.ok(skipped > 1000, `only ${skipped} rules left out`);
});

test('the index leaves out a rule only when no value can hold its literal, in any case the rule folds', () => {
  const rules: Record<string, unknown>[] = [];
  for (let i = 0; i < 10; i++) rules.push({ id: `noise${i}`, decision: 'deny', tool: 'file_read', match: { path: `gen-${i}/**` } });
  rules.push({ id: 'the-deny', decision: 'deny', tool: 'file_read', match: { path: 'secrets/**' } });
  const ruleSet = load(rules);
  const decide = (path: unknown) => evaluateRules(ruleSet, { toolName: 'file_read', input: { path }, participantId: 'a', workspaceRoot: ROOT }).ruleId;
  assert.equal(decide('SECRETS/key'), 'the-deny'); // deny folds case
  assert.equal(decide('./docs/../Secrets/key'), 'the-deny'); // normalized before the index reads it
  assert.equal(decide(['docs/a', 'secrets/b']), 'the-deny'); // any value of an array
  assert.equal(decide('gen-3/x'), 'noise3');
  assert.equal(decide('docs/secret'), null);
});

test('a literal is filed under its rarest three characters: `src/` paths do not make every rule naming `src-N` a candidate', () => {
  const rules: Record<string, unknown>[] = [];
  for (let i = 0; i < 10; i++) rules.push({ id: `dir${i}`, decision: 'deny', tool: 'file_read', match: { path: `**/src-${i}/**` } });
  const ruleSet = load(rules);
  const deny = ruleSet.tiersFor('file_read').deny;
  const query: RuleQuery = { toolName: 'file_read', input: { path: 'src/main.ts' }, participantId: 'a', workspaceRoot: ROOT };
  // Every literal starts with `src`, which the path holds; the run only `src-3` has does not.
  assert.deepEqual([...candidateMask(deny, lookupOf(query))], new Array(10).fill(0));
  const hit: RuleQuery = { ...query, input: { path: 'lib/SRC-3/x.ts' } };
  assert.equal(candidateMask(deny, lookupOf(hit))[3], 1);
  assert.equal(evaluateRules(ruleSet, hit).ruleId, 'dir3');
});

test('a reused candidate mask is rewritten for its rules, whatever it held, and a short one is refused', () => {
  const rules: Record<string, unknown>[] = [];
  for (let i = 0; i < 10; i++) rules.push({ id: `dir${i}`, decision: 'deny', tool: 'file_read', match: { path: `**/src-${i}/**` } });
  const deny = load(rules).tiersFor('file_read').deny;
  for (const path of ['src/main.ts', 'lib/SRC-3/x.ts']) {
    const values = lookupOf({ toolName: 'file_read', input: { path }, participantId: 'a', workspaceRoot: ROOT });
    const want = [...candidateMask(deny, values)];
    for (const stale of [0, 1]) {
      const buffer = new Uint8Array(16).fill(stale);
      assert.equal(candidateMaskInto(deny, values, buffer), buffer);
      assert.deepEqual([...buffer.subarray(0, 10)], want, `${path} over a buffer of ${stale}s`);
      assert.deepEqual([...buffer.subarray(10)], new Array(6).fill(stale), 'entries past the rules are left as they were');
    }
  }
  assert.throws(() => candidateMaskInto(deny, lookupOf({ toolName: 'file_read', input: { path: 'x' }, participantId: 'a', workspaceRoot: ROOT }), new Uint8Array(9)), RangeError);
});

/** The field values evaluate.ts reads for a call (no array items for allow rules, normalized paths). */
function lookupOf(query: RuleQuery) {
  const input = query.input as Record<string, unknown>;
  return (field: string, isPath: boolean, strict: boolean): readonly string[] | null => {
    let value = Object.hasOwn(input, field) ? input[field] : undefined;
    if (value === undefined && field === 'path' && isFileTool(query.toolName)) value = '.';
    let values: string[] | null = null;
    if (typeof value === 'string') values = [value];
    else if (strict && Array.isArray(value)) values = value.filter((v): v is string => typeof v === 'string');
    if (values && isPath) values = values.map((v) => normalizeRulePath(v, ROOT));
    return values;
  };
}


test(`property: the allow index for shell leaves out no rule that allows a simple command (seed ${SEED})`, () => {
  const rand = prng(SEED + 1);
  const WORDS = ['git', 'Git', 'status', 'log', 'npm', 'run', 'a b', '', 'x*', "it's", 'ls', '-la'];
  const word = () => pick(rand, WORDS);
  const quote = (w: string) => `'${w.replace(/'/g, `'\\''`)}'`;
  const patterns = (): unknown[] => [
    { words: [word() || 'x'] },
    { words: [word() || 'x', word() || 'a b'] },
    `${word()} ${word()}*`,
    `${word()} *`,
    `${word()}*`,
    word() || 'x',
    [`${word()} ${word()}`, `${word()} ${word()} *`],
    { regex: `${word().replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')} (status|log).*` },
    { regex: '.*' },
    { readOnly: ['ls', 'git status'] },
  ];
  let skipped = 0;
  for (let i = 0; i < ITERATIONS; i++) {
    const rules = Array.from({ length: 5 + Math.floor(rand() * 30) }, (_, r) => {
      const command = pick(rand, patterns());
      return { id: `r${r}`, decision: 'allow', tool: 'shell', ...(rand() < 0.1 ? {} : { match: { command } }) };
    });
    const ruleSet = load(rules);
    const allow = ruleSet.tiersFor('shell').allow;
    for (let c = 0; c < 20; c++) {
      const line = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => quote(word())).join(' ');
      const parsed = parsePlain(line);
      if (!parsed.plain) continue;
      for (const part of parsed.commands) {
        const text = argvText(part.argv);
        const candidates = new Set(allowCandidates(allow, part.argv[0]!, text));
        allow.forEach((rule, r) => {
          if (candidates.has(r)) return;
          skipped++;
          const field = rule.commandField!;
          const allows = field.words ? field.words.every((w, k) => part.argv[k] === w) : field.test(text);
          assert.equal(allows, false, `${rule.id} ${JSON.stringify(rule.spec)} left out but allows ${JSON.stringify(part.argv)} (${text})`);
        });
      }
    }
  }
  assert.ok(skipped > 1000, `only ${skipped} rules left out`);
});

test(`property: the deny and ask lookup by prefix and by literal leaves out no rule that matches a view (seed ${SEED})`, () => {
  const rand = prng(SEED + 2);
  // Cases and look-alikes: the Kelvin sign and long s fold onto ASCII in toLowerCase/toUpperCase but not in a non-unicode regex.
  const WORDS = ['curl', 'CURL', 'Curl', 'rm', 'RM', '-rf', '.env', '.ENV', '.legion', 'kill', '\u212Aill', 'ſudo', 'sudo', 'x', 'a b', 'ü', 'wget', '(', '<(x', '/dev/', 'of=/DEV/', 'k'];
  const word = () => pick(rand, WORDS);
  const escape = (w: string) => w.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
  const patterns = (): unknown[] => [
    `*${word()}*`,
    `*${word()} ${word()}*`,
    `${word()} *`,
    `${word()}*`,
    { regex: `.*${escape(word())}.*` },
    { regex: `.*(${escape(word())}|${escape(word())})\\b.*` },
    { regex: `(?=.*${escape(word())}).*` },
    { regex: `${escape(word())}\\s.*` },
    { regex: '.*' },
    [`*${word()}*`, `${word()} *`],
  ];
  let skipped = 0;
  for (let i = 0; i < ITERATIONS; i++) {
    const rules = Array.from({ length: 5 + Math.floor(rand() * 30) }, (_, r) => ({ id: `r${r}`, decision: pick(rand, ['deny', 'ask']), tool: 'shell', match: { command: pick(rand, patterns()) } }));
    const ruleSet = load(rules);
    const tiers = ruleSet.tiersFor('shell');
    for (let c = 0; c < 20; c++) {
      const views = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => Array.from({ length: 1 + Math.floor(rand() * 4) }, word).join(' '));
      for (const list of [tiers.deny, tiers.ask]) {
        // As evaluate.ts looks them up: by the views lower-cased; each rule then tests the views as they are.
        const candidates = new Set(candidateRules(list, views.map((v) => v.toLowerCase())));
        list.forEach((rule, r) => {
          if (candidates.has(r)) return;
          skipped++;
          for (const view of views) assert.equal(rule.commandField!.test(view), false, `${rule.id} ${JSON.stringify(rule.spec)} left out but matches ${JSON.stringify(view)}`);
        });
      }
    }
  }
  assert.ok(skipped > 1000, `only ${skipped} rules left out`);
});
