import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRegistry } from '../../../src/collective/registry';
import { createParticipantStore } from '../../../src/collective/store';
import { agentSchema, userSchema } from '../../../src/collective/participant';
import { grantGuard } from '../../../src/authz/grant-guard';
import { createBus } from '../../../src/events/bus';
import type { LegionEvent } from '../../../src/events/types';
import { layoutFor } from '../../../src/storage/layout';
import { withTempDir } from '../../helpers/tmp';
import { TRUSTED } from '../../../src/storage/workspace-trust';

const TOOLS = ['communicator', 'list_participants', 'file_read', 'file_write', 'shell', 'spawn_agent', 'modify_agent', 'retire_agent', 'resolve_approval'];

async function setup(dir: string) {
  const layout = layoutFor(dir);
  const store = createParticipantStore(layout);
  const bus = createBus({ runId: 'r' });
  const events: LegionEvent[] = [];
  bus.subscribeAll((e) => events.push(e));
  const participants = [
    userSchema().parse({ id: 'user', kind: 'user', name: 'You' }),
    agentSchema().parse({ id: 'ur-agent', kind: 'agent', name: 'Ur', systemPrompt: 'ur', tools: ['communicator'] }),
    agentSchema().parse({ id: 'boss', kind: 'agent', name: 'Boss', systemPrompt: 'b', tools: ['spawn_agent', 'modify_agent', 'retire_agent', 'file_read'] }),
  ];
  const registry = createRegistry({ store, participants, toolNames: () => TOOLS, guard: grantGuard, bus });
  return { layout, store, registry, events };
}

const spec = { id: 'scribe', name: 'Scribe', description: 'writes', systemPrompt: 'You write.', tools: ['file_read'] };

test('registry: spawn persists atomically, is usable at once, emits participant-change; a duplicate is refused', async () => {
  await withTempDir(async (dir) => {
    const { layout, registry, events } = await setup(dir);
    const spawned = await registry.spawn('boss', spec);
    assert.ok(spawned.ok);
    assert.equal(registry.get('scribe')?.status, 'active');
    const file = JSON.parse(await readFile(layout.participant('scribe'), 'utf8')) as Record<string, unknown>;
    assert.equal(file.version, 1);
    assert.equal(file.createdBy, 'boss');
    assert.deepEqual(events.map((e) => e.type === 'participant-change' && [e.participantId, e.change]), [['scribe', 'added']]);
    const again = await registry.spawn('boss', spec);
    assert.deepEqual(again, { ok: false, kind: 'exists', error: '"scribe" already exists (use modify_agent to change it)' });
    // Two concurrent spawns of one id: exactly one wins.
    const [x, y] = await Promise.all([registry.spawn('user', { ...spec, id: 'twin' }), registry.spawn('user', { ...spec, id: 'twin' })]);
    assert.equal([x, y].filter((r) => r.ok).length, 1);
  });
});

test('registry: no participant grants more than it holds; unknown tools and bad fields are refused', async () => {
  await withTempDir(async (dir) => {
    const { registry } = await setup(dir);
    assert.match((await registry.spawn('boss', { ...spec, tools: ['shell'] }) as { error: string }).error, /cannot grant tools you do not hold: shell/);
    assert.match((await registry.spawn('boss', { ...spec, approvalAuthority: '*' }) as { error: string }).error, /approvalAuthority beyond your own/);
    assert.match((await registry.spawn('user', { ...spec, tools: ['teleport'] }) as { error: string }).error, /unknown tool "teleport"/);
    assert.match((await registry.spawn('user', { ...spec, id: 'Bad Id' }) as { error: string }).error, /^id: /);
    assert.ok((await registry.spawn('user', { ...spec, tools: ['shell'] })).ok, 'the user holds everything');
    // Without a tools list an agent gets the talk tools, which the caller must hold too.
    const { tools: _omitted, ...noTools } = spec;
    assert.deepEqual(await registry.spawn('boss', { ...noTools, id: 'quiet' }), {
      ok: false, kind: 'grant',
      error: 'cannot grant tools you do not hold: communicator, list_participants (an agent spawned without a tools list gets communicator and list_participants)',
    });
    assert.equal(registry.get('scribe')?.kind === 'agent' && registry.get('scribe')?.status, 'active');
  });
});

test('registry: modify changes only the given fields; retire keeps the record, refuses the user and ur-agent', async () => {
  await withTempDir(async (dir) => {
    const { registry, events, store } = await setup(dir);
    await registry.spawn('boss', spec);
    const modified = await registry.modify('boss', { id: 'scribe', description: 'writes docs' });
    assert.ok(modified.ok);
    const scribe = registry.get('scribe');
    assert.ok(scribe?.kind === 'agent');
    assert.equal(scribe.description, 'writes docs');
    assert.equal(scribe.systemPrompt, 'You write.');
    assert.equal((await registry.modify('boss', { id: 'ghost', name: 'x' }) as { error: string }).error, 'no participant "ghost" (see list_participants)');
    assert.match((await registry.retire('boss', 'user') as { error: string }).error, /user cannot be retired/);
    assert.match((await registry.retire('boss', 'ur-agent') as { error: string }).error, /ur-agent cannot be retired/);
    assert.ok((await registry.retire('boss', 'scribe')).ok);
    assert.equal(registry.get('scribe')?.status, 'retired');
    assert.ok(registry.list().some((p) => p.id === 'scribe'), 'still listed');
    assert.equal((await registry.retire('boss', 'scribe') as { error: string }).error, '"scribe" is already retired');
    assert.deepEqual(events.map((e) => e.type === 'participant-change' && e.change), ['added', 'modified', 'retired']);
    assert.equal((await store.loadAll(TRUSTED)).find((p) => p.id === 'scribe')?.status, 'retired');
    assert.deepEqual(registry.list().map((p) => p.id)[0], 'user');
  });
});
