import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { planRepair } from '../../../src/model/repair';
import { readSessionFile } from '../../../src/session/session-files';
import { layoutFor } from '../../../src/storage/layout';
import { RESTART_SCRIPT, startRestartHarness } from '../../helpers/restart-fixture';
import { runCli } from '../../helpers/cli';
import { APP_DIR } from '../../helpers/app-harness';
import { withTempDir } from '../../helpers/tmp';

/**
 * `legion run` on a run whose user lane waits on an approval from an interactive session:
 * the resumed request is decided per --approve (headless), the resumed turn finishes before
 * the run closes, and the command prints its own turn's answer.
 */
for (const approve of ['all', 'deny'] as const) {
  test(`legion run --approve ${approve} on a run with a resumed approval: decided headlessly, the resumed turn finishes, histories valid`, async () => {
    await withTempDir(async (dir) => {
      const first = await startRestartHarness(dir);
      const sent = first.core.send('worker', 'write it');
      assert.ok(sent.ok);
      await first.waitFor((e) => e.type === 'approval-request');
      await first.close('quit');

      // The resumed turn's last model call is slow: `legion run` must wait for it before closing.
      const slow = RESTART_SCRIPT.replaceAll('on: tool-error, text', 'on: tool-error, delayMs: 60, text').replaceAll('on: tool-result, text', 'on: tool-result, delayMs: 60, text');
      writeFileSync(join(dir, 'script.yaml'), `${slow}  - { agent: worker, when: "say hello", text: "hello from worker" }\n`);
      const env = { HOME: dir, LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: join(dir, 'script.yaml') };
      const result = await runCli(['run', '--approve', approve, '--to', 'worker', '--session', 'other', 'say hello'], { cwd: dir, env, appDir: APP_DIR });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, 'hello from worker\n');
      if (approve === 'deny') assert.match(result.stderr, /1 action\(s\) needing approval were rejected \(--approve deny\): apr-1/);
      else assert.doesNotMatch(result.stderr, /rejected/);
      assert.equal(existsSync(join(dir, 'x.txt')), approve === 'all');

      const read = await readSessionFile(layoutFor(dir), first.core.runId, sent.sessionId);
      const last = read!.messages.at(-1)!;
      assert.equal(last.role, 'assistant');
      assert.match(last.content[0]!.type === 'text' ? last.content[0]!.text : '', approve === 'all' ? /^wrote it/ : /^could not/);
      assert.deepEqual(planRepair(read!.messages, new Date().toISOString()), { append: [], answered: [], problems: [] });
      const approvals = readFileSync(layoutFor(dir).approvals(first.core.runId), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { kind: string; decidedBy?: string });
      assert.deepEqual(approvals.map((l) => [l.kind, l.decidedBy]), [['request', undefined], ['resolve', 'headless']]);
    });
  });
}
