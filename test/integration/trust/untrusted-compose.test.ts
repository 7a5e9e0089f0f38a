import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, realpath } from 'node:fs/promises';
import { readTrustRegistry, trustRegistryFile } from '../../../src/storage/trust-registry';
import { join } from 'node:path';
import { startAppHarness } from '../../helpers/app-harness';
import { withTempDir } from '../../helpers/tmp';

/**
 * The composition root over an untrusted `.legion/` (docs/workspace-trust.md): the project config
 * is not loaded, stored agents lose their `approvalAuthority` in memory only (the
 * file keeps it), one warning is a start notice; once trusted, all of it applies again.
 */
const AGENTS = [{ id: 'lead', tools: ['communicator', 'resolve_approval'], approvalAuthority: '*' as const }];
const CONFIG = { runtime: { maxDepth: 3 } };

test('untrusted compose: project config and stored authority ignored, files untouched; trusted: restored', async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, '.legion', 'collective', 'participants', 'lead.json');
    const untrusted = await startAppHarness({ dir, untrusted: true, agents: AGENTS, config: CONFIG });
    try {
      const lead = untrusted.registry.get('lead');
      assert.ok(lead?.kind === 'agent');
      assert.deepEqual(lead.approvalAuthority, [], 'no approval authority from an untrusted store');
      assert.equal(untrusted.config.runtime.maxDepth, 10, 'the shipped default, not the project config');
      const notices = untrusted.events.filter((e) => e.type === 'notice' && /untrusted workspace/.test(e.message));
      assert.equal(notices.length, 1);
      assert.equal(untrusted.registry.get('user')?.approvalAuthority, '*', 'the user still approves everything');
      // Its transcripts are known to the sandbox of an enclosing workspace from this start on (docs/workspace-trust.md#the-registry).
      const known = readTrustRegistry(trustRegistryFile(join(dir, '.legion', 'test-home', '.config', 'legion')));
      assert.ok(known.ok);
      assert.deepEqual(known.registry.workspaces.map((e) => [e.root, e.state]), [[await realpath(dir), 'used']]);
    } finally {
      await untrusted.close();
    }
    assert.equal(JSON.parse(await readFile(file, 'utf8')).approvalAuthority, '*', 'the file is untouched');

    const trusted = await startAppHarness({ dir, agents: AGENTS, config: CONFIG });
    try {
      const lead = trusted.registry.get('lead');
      assert.ok(lead?.kind === 'agent');
      assert.equal(lead.approvalAuthority, '*');
      assert.equal(trusted.config.runtime.maxDepth, 3);
      assert.equal(trusted.events.filter((e) => e.type === 'notice' && /untrusted workspace/.test(e.message)).length, 0);
    } finally {
      await trusted.close();
    }
  });
});
