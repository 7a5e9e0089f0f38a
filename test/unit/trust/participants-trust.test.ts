import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { createParticipantStore } from '../../../src/collective/store';
import { layoutFor } from '../../../src/storage/layout';
import { TRUSTED, type WorkspaceTrust } from '../../../src/storage/workspace-trust';

const UNTRUSTED: WorkspaceTrust = { trusted: false, reason: 'no-marker', detail: 'test' };

async function committed(dir: string): Promise<string> {
  const participants = join(dir, '.legion', 'collective', 'participants');
  await mkdir(participants, { recursive: true });
  const agent = (id: string, approvalAuthority: unknown) => JSON.stringify({ version: 1, id, kind: 'agent', name: id, systemPrompt: 'x', approvalAuthority });
  await writeFile(join(participants, 'boss.json'), agent('boss', '*'));
  await writeFile(join(participants, 'reviewer.json'), agent('reviewer', ['merge']));
  await writeFile(join(participants, 'plain.json'), agent('plain', []));
  await writeFile(join(participants, 'user.json'), JSON.stringify({ version: 1, id: 'user', kind: 'user', name: 'You' }));
  await writeFile(join(participants, 'mallory.json'), JSON.stringify({ version: 1, id: 'mallory', kind: 'user', name: 'Mallory' }));
  return participants;
}

test('untrusted load: agents without approvalAuthority, no second user; the user keeps hers; trusted load: as written', async () => {
  await withTempDir(async (dir) => {
    await committed(dir);
    const store = createParticipantStore(layoutFor(dir));
    const untrusted = await store.loadAll(UNTRUSTED);
    assert.deepEqual(untrusted.map((p) => [p.id, p.approvalAuthority]), [['boss', []], ['plain', []], ['reviewer', []], ['user', '*']]);
    const trusted = await createParticipantStore(layoutFor(dir)).loadAll(TRUSTED);
    assert.deepEqual(trusted.map((p) => [p.id, p.approvalAuthority]), [['boss', '*'], ['mallory', '*'], ['plain', []], ['reviewer', ['merge']], ['user', '*']]);
  });
});

test('a stripped agent saved again (its description changed) keeps the authority of its file; one given authority in memory is written as given', async () => {
  await withTempDir(async (dir) => {
    const participants = await committed(dir);
    const store = createParticipantStore(layoutFor(dir));
    const loaded = await store.loadAll(UNTRUSTED);
    const boss = loaded.find((p) => p.id === 'boss')!;
    assert.ok(boss.kind === 'agent');
    await store.save({ ...boss, description: 'changed while untrusted' });
    const onDisk = JSON.parse(await readFile(join(participants, 'boss.json'), 'utf8'));
    assert.equal(onDisk.approvalAuthority, '*');
    assert.equal(onDisk.description, 'changed while untrusted');
    const reviewer = loaded.find((p) => p.id === 'reviewer')!;
    assert.ok(reviewer.kind === 'agent');
    await store.save({ ...reviewer, approvalAuthority: ['file_write'] });
    assert.deepEqual(JSON.parse(await readFile(join(participants, 'reviewer.json'), 'utf8')).approvalAuthority, ['file_write']);
  });
});
