import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withTempDir } from '../helpers/tmp';
import { startAppHarness } from '../helpers/app-harness';
import { renderApp } from '../helpers/tui-app';
import type { FakeCore } from '../helpers/fake-core';

/** An agent file (docs/conventions.md#agent-files) is a participant the screens offer like any other. */
test('an agent file\'s participant is listed by the core and offered by the new-session picker', async () => {
  await withTempDir(async (dir) => {
    mkdirSync(join(dir, '.legion', 'agents'), { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, '.legion', 'agents', 'reviewer.md'), '---\nname: reviewer\ndescription: Reviews code\ntools: Read, Grep\n---\nYou review.\n', { mode: 0o600 });
    const app = await startAppHarness({ dir });
    try {
      const reviewer = app.core.participants().find((p) => p.id === 'reviewer');
      assert.ok(reviewer && reviewer.kind === 'agent');
      assert.deepEqual(reviewer.tools, ['file_read', 'grep']);
      // The real core behind the real App: Ctrl+N lists the agents to talk to.
      const ui = await renderApp({ core: app.core as unknown as FakeCore, columns: 110, rows: 30 });
      try {
        await ui.press('ctrl+n');
        assert.match(ui.frame(), /reviewer/);
        await ui.type('revi');
        assert.match(ui.frame(), /reviewer/);
      } finally {
        ui.unmount();
      }
    } finally {
      await app.close();
    }
  });
});
