import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { findWorkflow, loadWorkflows, parseWorkflow, resolveInputs } from '../../../src/workflows/load';
import { withTempDir } from '../../helpers/tmp';

const AGENTS = ['ur-agent', 'resource-agent', 'reviewer'];
const parse = (text: string, name = 'wf') => parseWorkflow(text, `/w/${name}.yaml`, { source: 'project', agents: AGENTS });
const error = (text: string, name?: string): string => {
  const result = parse(text, name);
  assert.equal(result.ok, false, 'expected an error');
  return (result as { error: string }).error;
};

const GOOD = `description: plan then review
inputs:
  focus: { description: what to look at, default: correctness }
  target: { description: the branch }
budgetUsd: 1.5
steps:
  - id: plan
    agent: ur-agent
    prompt: "Plan {{ input }} for {{inputs.target}}"
  - id: review
    agent: reviewer
    after: [plan]
    prompt: "Review {{steps.plan.output}} for {{inputs.focus}}"
`;

test('a valid workflow: steps resolved with their session names, inputs and budget', () => {
  const result = parse(GOOD);
  assert.ok(result.ok, JSON.stringify(result));
  const w = result.workflow;
  assert.equal(w.name, 'wf');
  assert.equal(w.budgetUsd, 1.5);
  assert.deepEqual(w.steps.map((s) => [s.id, s.agent, s.session, s.after]), [['plan', 'ur-agent', 'wf-plan', []], ['review', 'reviewer', 'wf-review', ['plan']]]);
  assert.deepEqual(w.inputs.focus, { description: 'what to look at', default: 'correctness' });
});

test('unknown step in after: file:line of the entry, with a suggestion', () => {
  const text = `steps:
  - id: plan
    agent: ur-agent
    prompt: p
  - id: review
    agent: ur-agent
    after:
      - plna
    prompt: q
`;
  assert.equal(error(text), '/w/wf.yaml:8: step review: unknown step "plna" in after (did you mean "plan"?)');
});

test('a cycle is named, in running order', () => {
  const text = `steps:
  - id: a
    agent: ur-agent
    prompt: p
    after: [c]
  - id: b
    agent: ur-agent
    prompt: p
    after: [a]
  - id: c
    agent: ur-agent
    prompt: p
    after: [b]
`;
  assert.match(error(text), /^\/w\/wf\.yaml:\d+: steps form a cycle: (a → b → c → a|b → c → a → b|c → a → b → c)$/);
  assert.match(error(`steps:\n  - { id: a, agent: ur-agent, prompt: p, after: [a] }\n`), /^\/w\/wf\.yaml:2: step a: cannot run after itself$/);
});

test('unknown agent (against the collective), with a suggestion', () => {
  const text = `steps:\n  - id: a\n    agent: reviewr\n    prompt: p\n`;
  assert.match(error(text), /^\/w\/wf\.yaml:3: step a: unknown agent "reviewr" \(did you mean "reviewer"\?\)/);
  // Without a collective to check against, agents are not checked.
  assert.ok(parseWorkflow(text, '/w/wf.yaml', { source: 'project' }).ok);
});

test('unknown template variables: unknown form, undeclared input, unknown step, step not before', () => {
  const step = (prompt: string) => `inputs:\n  focus: {}\nsteps:\n  - id: a\n    agent: ur-agent\n    prompt: p\n  - id: b\n    agent: ur-agent\n    prompt: "${prompt}"\n`;
  assert.match(error(step('{{inptu}}')), /^\/w\/wf\.yaml:9: step b: unknown template variable \{\{inptu\}\}/);
  assert.match(error(step('{{inputs.focsu}}')), /^\/w\/wf\.yaml:9: step b: unknown template variable \{\{inputs\.focsu\}\}: no input "focsu" under inputs \(did you mean "focus"\?\)/);
  assert.match(error(step('{{steps.x.output}}')), /step b: unknown template variable \{\{steps\.x\.output\}\}: no step "x"/);
  assert.match(error(step('{{steps.a.output}}')), /^\/w\/wf\.yaml:9: step b: \{\{steps\.a\.output\}\} is not ready when b starts: add "a" to its after$/);
  assert.match(error(step('{{steps.b.output}}')), /step b: \{\{steps\.b\.output\}\} is not ready/);
  assert.ok(parse(step('{{ input }} {{inputs.focus}}')).ok);
});

test('an output of a step reached through after transitively is allowed', () => {
  const text = `steps:
  - { id: a, agent: ur-agent, prompt: p }
  - { id: b, agent: ur-agent, prompt: p, after: [a] }
  - { id: c, agent: ur-agent, prompt: "{{steps.a.output}}", after: [b] }
`;
  assert.ok(parse(text).ok);
});

test('duplicate step ids name both lines', () => {
  const text = `steps:\n  - { id: a, agent: ur-agent, prompt: p }\n  - { id: b, agent: ur-agent, prompt: p }\n  - { id: a, agent: ur-agent, prompt: q }\n`;
  assert.equal(error(text), '/w/wf.yaml:4: step a: duplicate id (also at line 2)');
});

test('two steps in one session are refused (their turns would queue behind each other)', () => {
  const text = `steps:\n  - { id: a, agent: ur-agent, prompt: p, session: shared }\n  - { id: b, agent: ur-agent, prompt: p, session: shared }\n`;
  assert.match(error(text), /^\/w\/wf\.yaml:3: step b: shares session "shared" of ur-agent with step a/);
});

test('shape errors: unknown field with suggestion, missing fields, wrong types, bad ids, empty steps, syntax', () => {
  assert.equal(error(`steps:\n  - id: a\n    agent: ur-agent\n    promt: p\n`), '/w/wf.yaml:4: unknown field "promt" (did you mean "prompt"?)');
  assert.equal(error(`steps:\n  - id: a\n    agent: ur-agent\n`), '/w/wf.yaml:2: steps.0.prompt: expected string, received undefined');
  assert.equal(error(`budgetUsd: lots\nsteps:\n  - { id: a, agent: ur-agent, prompt: p }\n`), '/w/wf.yaml:1: budgetUsd: expected number, received string');
  assert.match(error(`budgetUsd: -1\nsteps:\n  - { id: a, agent: ur-agent, prompt: p }\n`), /^\/w\/wf\.yaml:1: budgetUsd: /);
  assert.match(error(`steps:\n  - { id: "has space", agent: ur-agent, prompt: p }\n`), /^\/w\/wf\.yaml:2: steps\.0\.id: a step id is 1–30 characters/);
  assert.match(error(`description: x\nsteps: []\n`), /^\/w\/wf\.yaml:2: steps: a workflow needs at least one step$/);
  assert.match(error(`descripton: x\nsteps:\n  - { id: a, agent: ur-agent, prompt: p }\n`), /^\/w\/wf\.yaml:1: unknown field "descripton" \(did you mean "description"\?\)/);
  assert.match(error(`steps:\n  - id: a\n   agent: x\n`), /^\/w\/wf\.yaml:\d+: YAML syntax: /);
  assert.equal(error(`- a\n- b\n`), '/w/wf.yaml:1: a workflow file is a mapping with description, inputs, budgetUsd and steps');
  assert.match(error(`steps:\n  - { id: a, agent: ur-agent, prompt: p }\n`, 'bad name'), /the file name "bad name" is not a workflow name/);
  // The session name `<workflow>-<step>` must be a valid session name.
  assert.match(error(`steps:\n  - { id: abcdefghijklmnopqrstuvwxyz, agent: ur-agent, prompt: p }\n`, 'a-rather-long-workflow-name'), /^\/w\/a-rather-long-workflow-name\.yaml:2: step abcdefghijklmnopqrstuvwxyz: invalid session name/);
});

test('loadWorkflows: shipped and project directories, project overrides by name, broken files listed with their error', async () => {
  await withTempDir(async (dir) => {
    const shipped = join(dir, 'shipped');
    const project = join(dir, 'project');
    await mkdir(shipped);
    await mkdir(project);
    await writeFile(join(shipped, 'alpha.yaml'), 'description: shipped alpha\nsteps:\n  - { id: a, agent: ur-agent, prompt: p }\n');
    await writeFile(join(shipped, 'beta.yaml'), 'description: shipped beta\nsteps:\n  - { id: a, agent: ur-agent, prompt: p }\n');
    await writeFile(join(project, 'beta.yaml'), 'description: project beta\nsteps:\n  - { id: a, agent: ur-agent, prompt: p }\n');
    await writeFile(join(project, 'gamma.yml'), 'steps:\n  - { id: a, agent: nobody, prompt: p }\n');
    await writeFile(join(project, 'notes.txt'), 'ignored');
    const entries = await loadWorkflows({ shipped, project }, { agents: AGENTS });
    assert.deepEqual(entries.map((e) => (e.ok ? [e.workflow.name, e.workflow.source, e.workflow.description] : [e.name, e.source, e.error])), [
      ['alpha', 'shipped', 'shipped alpha'],
      ['beta', 'project', 'project beta'],
      ['gamma', 'project', `${join(project, 'gamma.yml')}:2: step a: unknown agent "nobody" (create it first, e.g. ask resource-agent; see legion workflows)`],
    ]);
    assert.equal(findWorkflow(entries, 'gamma').ok, false);
    assert.match((findWorkflow(entries, 'alpah') as { error: string }).error, /^no workflow "alpah" \(did you mean "alpha"\?\) \(known: alpha, beta, gamma/);
    assert.deepEqual(await loadWorkflows({ shipped: join(dir, 'none'), project: join(dir, 'none2') }), []);
  });
});

test('resolveInputs: given values, defaults, unknown and missing inputs', () => {
  const result = parse(GOOD);
  assert.ok(result.ok);
  assert.deepEqual(resolveInputs(result.workflow, { target: 'main' }), { ok: true, inputs: { focus: 'correctness', target: 'main' } });
  assert.deepEqual(resolveInputs(result.workflow, { target: 'x', focus: 'speed' }), { ok: true, inputs: { focus: 'speed', target: 'x' } });
  assert.deepEqual(resolveInputs(result.workflow, {}), { ok: false, error: 'workflow wf needs --input target=… (the branch)' });
  assert.match((resolveInputs(result.workflow, { target: 'x', fcous: 'y' }) as { error: string }).error, /has no input "fcous" \(did you mean "focus"\?\) \(inputs: focus, target\)/);
});
