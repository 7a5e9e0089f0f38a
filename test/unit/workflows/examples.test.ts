import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { loadTemplates } from '../../../src/collective/templates';
import { loadWorkflows } from '../../../src/workflows/load';
import { APP_DIR } from '../../helpers/runtime-harness';

test('the shipped workflows load and validate against the default collective', async () => {
  const agents = (await loadTemplates(join(APP_DIR, 'config', 'agents'))).filter((p) => p.kind === 'agent').map((p) => p.id);
  const entries = await loadWorkflows({ shipped: join(APP_DIR, 'config', 'workflows'), project: join(APP_DIR, 'no-such-dir') }, { agents });
  const byName = Object.fromEntries(entries.map((e) => {
    assert.ok(e.ok, e.ok ? '' : e.error);
    return [e.workflow.name, e.workflow];
  }));
  assert.deepEqual(Object.keys(byName), ['parallel-review', 'plan-implement-review']);
  const pipeline = byName['plan-implement-review']!;
  assert.deepEqual(pipeline.steps.map((s) => [s.id, s.after]), [['plan', []], ['implement', ['plan']], ['review', ['implement']]]);
  const fanout = byName['parallel-review']!;
  assert.deepEqual(fanout.steps.map((s) => [s.id, s.agent, s.after]), [
    ['setup', 'resource-agent', []],
    ['correctness', 'ur-agent', ['setup']], ['security', 'ur-agent', ['setup']], ['tests', 'ur-agent', ['setup']],
    ['summary', 'ur-agent', ['correctness', 'security', 'tests']],
  ]);
  assert.ok(fanout.budgetUsd && pipeline.budgetUsd);
  assert.equal(fanout.inputs.focus?.default, 'nothing in particular');
});
