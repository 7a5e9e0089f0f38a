import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { warmTemplateParsers } from '../../../src/cli/snapshot-warm';
import { initWorkspace } from '../../../src/collective/init';
import { createParticipantStore, parseParticipantFile } from '../../../src/collective/store';
import { parseTemplate } from '../../../src/collective/templates';
import { layoutFor } from '../../../src/storage/layout';
import { TRUSTED } from '../../../src/storage/workspace-trust';
import { forgetBuiltSchemas } from '../../../src/storage/lazy-schema';
import { withTempDir } from '../../helpers/tmp';

/**
 * The shipped templates and the participant files `legion init` writes of them, parsed while
 * the start-up snapshot builds (src/cli/snapshot-warm.ts), are reused only for exactly those
 * texts; every other text is validated as before (docs/performance.md#the-start-up-snapshot).
 */
const APP = resolve('.');
const CONFIG = resolve('config');
const templateNames = ['agents', 'demo-agents'].flatMap((dir) => readdirSync(join(CONFIG, dir)).filter((n) => /\.ya?ml$/.test(n)).map((n) => `${dir}/${n}`));
const shipped = (name: string): string | undefined => readFileSync(join(CONFIG, name), 'utf8');

test('precompiled participants: the files `legion init` writes and the shipped templates load without building a schema, a copy per load', async () => {
  warmTemplateParsers(templateNames, shipped);
  await withTempDir(async (dir) => {
    await initWorkspace({ appDir: APP, workspaceRoot: dir, userDir: join(dir, 'user') });
    forgetBuiltSchemas();
    const store = createParticipantStore(layoutFor(dir));
    const first = await store.loadAll(TRUSTED);
    const second = await store.loadAll(TRUSTED);
    const demo = templateNames.map((name) => parseTemplate(shipped(name)!, join(CONFIG, name)));
    assert.equal(forgetBuiltSchemas(), 0, 'no zod schema was built: every file and template was a kept one');
    assert.ok(first.length >= 3);
    assert.deepEqual(first, second);
    assert.notEqual(first[0], second[0], 'each load gets its own participants');
    // The same results as a fresh validation (a text one character different is not kept).
    for (const p of first) {
      const file = join(layoutFor(dir).participantsDir, `${p.id}.json`);
      const text = await readFile(file, 'utf8');
      assert.deepEqual(parseParticipantFile(text + ' ', file, `${p.id}.json`), p);
    }
    const ur = first.find((p) => p.id === 'ur-agent');
    assert.ok(ur && ur.kind === 'agent');
    ur.tools.push('shell');
    const again = (await store.loadAll(TRUSTED)).find((p) => p.id === 'ur-agent');
    assert.ok(again?.kind === 'agent' && !again.tools.includes('shell'), 'a load changing its participant does not change the next');
    assert.deepEqual(demo.map((p) => p.id).sort(), templateNames.map((n) => n.replace(/^.*\/|\.ya?ml$/g, '')).sort());
  });
});

test('precompiled participants: an edited file is validated, an untrusted workspace still strips authority, and a kept text under another name is refused', async () => {
  warmTemplateParsers(templateNames, shipped);
  await withTempDir(async (dir) => {
    await initWorkspace({ appDir: APP, workspaceRoot: dir, userDir: join(dir, 'user') });
    const layout = layoutFor(dir);
    const store = createParticipantStore(layout);
    const resourceFile = join(layout.participantsDir, 'resource-agent.json');
    const text = await readFile(resourceFile, 'utf8');
    // The kept text, renamed: the name check still runs.
    assert.throws(() => parseParticipantFile(text, 'participants/other.json', 'other.json'), /id "resource-agent" does not match the file name/);
    // Untrusted: the kept participants lose their authority as parsed ones do.
    const untrusted = await store.loadAll({ trusted: false } as Parameters<typeof store.loadAll>[0]);
    for (const p of untrusted) if (p.kind === 'agent') assert.deepEqual(p.approvalAuthority, [], p.id);
    // Edited: validated as it is.
    await writeFile(resourceFile, text.replace('"status": "active"', '"status": "sleeping"'));
    await assert.rejects(store.loadAll(TRUSTED), /resource-agent\.json: status/);
    const template = shipped('agents/ur-agent.yaml')!;
    assert.throws(() => parseTemplate(template.replace(/^id: .*$/m, 'id: Not An Id'), 'config/agents/ur-agent.yaml'), /ur-agent\.yaml:\d+: id/);
  });
});
