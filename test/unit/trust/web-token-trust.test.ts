import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { createFakeCore } from '../../helpers/fake-core';
import { webAddon } from '../../../src/remote/web/addon';
import { webTokenFile } from '../../../src/remote/web/token';
import { configSchema } from '../../../src/config/schema';

const COMMITTED = 'a'.repeat(43);

/** `legion serve --web` with a `.legion/web-token` someone committed: kept only in a trusted workspace (docs/workspace-trust.md). */
async function served(dir: string, workspaceTrusted: boolean): Promise<{ token: string; url: string }> {
  const legionDir = join(dir, '.legion');
  await mkdir(legionDir, { recursive: true });
  await writeFile(webTokenFile(legionDir), `${COMMITTED}\n`, { mode: 0o600 });
  const lines: string[] = [];
  const close = await webAddon.start({
    core: createFakeCore(), config: configSchema().parse({}), workspaceRoot: dir, legionDir, workspaceTrusted,
    flags: new Map([['web', '127.0.0.1:0']]), env: {}, log: (line) => void lines.push(line),
  });
  await close?.();
  return { token: (await readFile(webTokenFile(legionDir), 'utf8')).trim(), url: lines.find((l) => l.startsWith('web page:')) ?? '' };
}

test('legion serve --web: a committed web token is replaced in an untrusted workspace, kept in a trusted one', async () => {
  await withTempDir(async (dir) => {
    const untrusted = await served(dir, false);
    assert.notEqual(untrusted.token, COMMITTED);
    assert.ok(!untrusted.url.includes(COMMITTED));
    const trusted = await served(dir, true);
    assert.equal(trusted.token, COMMITTED);
  });
});
