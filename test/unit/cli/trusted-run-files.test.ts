import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { trustedRunFiles } from '../../../src/cli/trusted-run-files';

// docs/sandbox.md#trusted-files: what the sandbox binds read-only comes from the user's approvals of this workspace only.
test('the files of this workspace\'s approvals, and the defining files while an approval exists; nothing from another workspace or a broken store', async () => {
  await withTempDir(async (dir) => {
    const ws = join(dir, 'ws');
    await mkdir(ws);
    const mcp = join(dir, 'mcp-trust.json');
    const hooks = join(dir, 'hooks-trust.json');
    const files = trustedRunFiles({ workspaceRoot: ws, mcpTrustFile: mcp, hooksTrustFile: hooks });
    assert.deepEqual(files(), [], 'no store: nothing trusted, nothing protected');
    await writeFile(mcp, JSON.stringify({ version: 1, workspaces: {
      [ws]: { srv: { definition: 'f', files: { 'tools/mcp.js': 'h' } }, old: 'fingerprint-only' },
      [join(dir, 'other')]: { x: { definition: 'f', files: { 'other.js': 'h' } } },
    } }));
    assert.deepEqual(files(), [join(ws, 'tools/mcp.js'), join(ws, '.mcp.json')]);
    await writeFile(hooks, JSON.stringify({ version: 1, workspaces: { [ws]: { hooks: { definition: 'f', files: { '.claude/hooks/check.sh': 'h' } } } } }));
    assert.deepEqual(files().sort(), [join(ws, '.claude/hooks/check.sh'), join(ws, '.claude/settings.json'), join(ws, '.claude/settings.local.json'), join(ws, '.mcp.json'), join(ws, 'tools/mcp.js')].sort(), 'read again on each call');
    await writeFile(mcp, '{ not json');
    assert.deepEqual(files().sort(), [join(ws, '.claude/hooks/check.sh'), join(ws, '.claude/settings.json'), join(ws, '.claude/settings.local.json')].sort(), 'a broken store approves nothing (its servers do not start either)');
  });
});
