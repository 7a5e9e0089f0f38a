import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stringify } from 'yaml';
import { parseRuleSources } from '../../../../src/authz/rules/load';
import { evaluateRules } from '../../../../src/authz/rules/evaluate';
import { createAuthorizer } from '../../../../src/authz/authorizer';
import { createAllowanceSet } from '../../../../src/authz/allowances';
import { escapeGlob, escapeRegex } from '../../../../src/authz/rules/glob';
import type { Participant } from '../../../../src/collective/participant';
import type { RuleSet } from '../../../../src/authz/rules/rule-set';
import { prng } from '../../../helpers/prng';


const SEED = Number(process.env.LEGION_PROPERTY_SEED ?? 20240611);
const ITERATIONS = Number(process.env.LEGION_PROPERTY_ITERATIONS ?? 300);
const ROOT = '/ws';

const TOOLS = ['file_read', 'file_write', 'file_edit', 'grep', 'communicator', 'shell', 'mcp__x__do'];
const PATHS = ['src/a.ts', 'docs/b.md', '.env', 'a/b/c/d.txt', 'x y/z.md', 'weird[1].ts', 'ü/é.md'];
const PATH_SPELLINGS = (p: string) => [p, `./${p}`, `${ROOT}/${p}`, `docs/../${p}`, `${p.split('/').join('//')}`];
const COMMANDS = ['git status', 'ls -la', 'npm test', 'rm -rf build', 'cat src/a.ts', 'echo hi', 'make all', 'curl https://x'];
const WRAPS: ((c: string) => string)[] = [
  (c) => c,
  (c) => `git status; ${c}`,
  (c) => `${c} && ls`,
  (c) => `ls | ${c}`,
  (c) => `echo $(${c})`,
  (c) => `echo "\`${c}\`"`,
  (c) => `(${c})`,
  (c) => `{ ${c}; }`,
  (c) => `sudo ${c}`,
  (c) => `env X=1 ${c}`,
  (c) => `timeout 5 ${c}`,
  (c) => `sh -c '${c}'`,
  (c) => `bash -c "${c}"`,
  (c) => `eval "${c}"`,
  (c) => `if true; then ${c}; fi`,
  (c) => `ls\n${c}\n`,
  (c) => `diff <(${c}) x`,
];

const pick = <T>(rand: () => number, items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;

interface Call {
  toolName: string;
  input: Record<string, unknown>;
  participantId: string;
  /** The value a deny rule is written against, and the field. */
  field: string;
  target: string;
}

function randomCall(rand: () => number): Call {
  const toolName = pick(rand, TOOLS);
  const participantId = pick(rand, ['agent-a', 'agent-b', 'qa-1']);
  if (toolName === 'shell') {
    const payload = pick(rand, COMMANDS);
    return { toolName, participantId, input: { command: pick(rand, WRAPS)(payload) }, field: 'command', target: payload };
  }
  if (toolName === 'communicator') {
    const target = pick(rand, ['scribe', 'tester', 'user']);
    return { toolName, participantId, input: { targetId: target, message: 'hi' }, field: 'targetId', target };
  }
  if (toolName === 'mcp__x__do') return { toolName, participantId, input: { thing: 'a b' }, field: 'thing', target: 'a b' };
  const path = pick(rand, PATHS);
  return { toolName, participantId, input: { path: pick(rand, PATH_SPELLINGS(path)) }, field: 'path', target: path };
}

/** A deny rule built to match the call, in one of several spellings. */
function matchingDeny(rand: () => number, call: Call, id: string): Record<string, unknown> {
  const tool = pick(rand, [call.toolName, '*', `${call.toolName}|mcp__other`, `${call.toolName.slice(0, 4)}*`, `{${call.toolName},x}`]);
  const value = pick(rand, [
    escapeGlob(call.target),
    [`nothing-${id}`, escapeGlob(call.target)],
    { regex: escapeRegex(call.target) },
    { regex: escapeRegex(call.target).toUpperCase() === escapeRegex(call.target) ? escapeRegex(call.target) : escapeRegex(call.target).toUpperCase() },
  ]);
  const rule: Record<string, unknown> = { id, decision: 'deny', tool, match: { [call.field]: value } };
  if (rand() < 0.5) rule.participants = [pick(rand, ['*', call.participantId, `${call.participantId.slice(0, 3)}*`])];
  return rule;
}

/** Other rules: allows and asks that also match everything, plus random noise. */
function noise(rand: () => number, call: Call, n: number, prefix: string): Record<string, unknown>[] {
  const rules: Record<string, unknown>[] = [];
  for (let i = 0; i < n; i++) {
    const decision = pick(rand, ['allow', 'allow', 'ask', 'deny']);
    const id = `${prefix}${i}`;
    const kind = rand();
    if (kind < 0.3) rules.push({ id, decision: decision === 'deny' ? 'allow' : decision, tool: '*' });
    else if (kind < 0.6) rules.push({ id, decision: decision === 'deny' ? 'ask' : decision, tool: call.toolName, match: { [call.field]: pick(rand, ['*', '**', { regex: '.*' }]) } });
    else rules.push({ id, decision, tool: `${pick(rand, TOOLS)}*`, match: { [pick(rand, ['path', 'command', 'targetId'])]: `no-match-${i}/**` } });
  }
  return rules;
}

function load(layers: Record<string, unknown>[][], unmatched: string): RuleSet {
  const loaded = parseRuleSources(
    layers.map((rules, i) => ({ file: `layer${i}.yaml`, text: stringify({ version: 1, defaults: { unmatched }, rules }) })),
  );
  if (!loaded.ok) throw new Error(loaded.error);
  return loaded.ruleSet;
}

test(`property: a matching deny is never overridden (seed ${SEED}, ${ITERATIONS} cases)`, () => {
  const rand = prng(SEED);
  for (let i = 0; i < ITERATIONS; i++) {
    const call = randomCall(rand);
    const denyLayer = Math.floor(rand() * 3);
    const layers = [noise(rand, call, 1 + Math.floor(rand() * 8), 'a'), noise(rand, call, Math.floor(rand() * 8), 'b'), noise(rand, call, Math.floor(rand() * 8), 'c')];
    layers[denyLayer]!.splice(Math.floor(rand() * (layers[denyLayer]!.length + 1)), 0, matchingDeny(rand, call, `the-deny-${i}`));
    const ruleSet = load(layers, pick(rand, ['allow', 'ask', 'deny']));
    const context = `case ${i} (seed ${SEED}): ${call.toolName} ${JSON.stringify(call.input)} as ${call.participantId}\n${ruleSet.rules.map((r) => `${r.id} ${JSON.stringify(r.spec)}`).join('\n')}`;

    const outcome = evaluateRules(ruleSet, { toolName: call.toolName, input: call.input, participantId: call.participantId, workspaceRoot: ROOT });
    assert.equal(outcome.decision, 'deny', context);

    // Nothing downstream can lift it: an `auto` policy for everything and a session allowance for this very call.
    const agent: Participant = {
      id: call.participantId, kind: 'agent', name: 'A', description: '', status: 'active', systemPrompt: 'x', provider: 'default', model: 'default',
      tools: ['*'], toolAuthorizations: { '*': 'auto', [call.toolName]: 'auto' }, approvalAuthority: '*',
    };
    const allowances = createAllowanceSet();
    const full = { ...call, sessionId: 's', chain: [] };
    assert.ok(allowances.add(full, ROOT).ok);
    const authorize = createAuthorizer({ gitConfigPaths: () => [], ruleSet, workspaceRoot: ROOT, getParticipant: (id) => (id === agent.id ? agent : undefined), allowances });
    const verdict = authorize(full);
    assert.equal(verdict.decision, 'deny', context);
    assert.ok(verdict.source === 'rule', context);
  }
});

test('property: the deny spellings really are needed (without the deny, the same cases are not all denied)', () => {
  const rand = prng(SEED);
  let notDenied = 0;
  for (let i = 0; i < 100; i++) {
    const call = randomCall(rand);
    const ruleSet = load([noise(rand, call, 4, 'a').filter((r) => r.decision !== 'deny')], 'allow');
    const outcome = evaluateRules(ruleSet, { toolName: call.toolName, input: call.input, participantId: call.participantId, workspaceRoot: ROOT });
    if (outcome.decision !== 'deny') notDenied++;
  }
  assert.ok(notDenied > 50, `${notDenied}`);
});
