import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { loadTemplates } from '../../../src/collective/templates';
import { checkGrant } from '../../../src/authz/grant-guard';
import { holdsTool } from '../../../src/authz/authorizer';
import { APP_DIR } from '../../helpers/app-harness';

test('resource-agent holds mcp__* and can grant a server\'s tools; an agent without them cannot', async () => {
  const templates = await loadTemplates(join(APP_DIR, 'config', 'agents'));
  const resource = templates.find((t) => t.id === 'resource-agent')!;
  const ur = templates.find((t) => t.id === 'ur-agent')!;
  assert.equal(resource.kind, 'agent');
  assert.ok(holdsTool((resource as any).tools, 'mcp__github__create_issue'));
  assert.deepEqual(checkGrant(resource, { tools: ['mcp__github__*'] }), { ok: true });
  assert.deepEqual(checkGrant(resource, { tools: ['mcp__everything__echo'] }), { ok: true });
  const refused = checkGrant(ur, { tools: ['mcp__github__*'] });
  assert.equal(refused.ok, false);
  assert.match((refused as { error: string }).error, /cannot grant tools you do not hold: mcp__github__\*/);
  const narrow = { ...resource, tools: ['mcp__github__*'] } as typeof resource;
  assert.equal(checkGrant(narrow, { tools: ['mcp__slack__post'] }).ok, false, 'one server\'s grant does not cover another');
  assert.equal(checkGrant(narrow, { tools: ['mcp__github__list'] }).ok, true);
});
