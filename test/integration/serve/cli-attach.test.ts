import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../../helpers/cli';
import { withTempDir } from '../../helpers/tmp';
import { until } from '../../helpers/processes';
import { APP_DIR } from '../../helpers/crash-workspace';
import { hostInProcess, setupServeWorkspace } from '../../helpers/serve-workspace';

test('legion run attaches to the running server: the answer, --json events, --approve and --new refused, --attach without a server', { timeout: 90_000 }, async () => {
  await withTempDir(async (dir) => {
    const env = await setupServeWorkspace(dir);
    const none = await runCli(['run', '--attach', 'hello'], { cwd: dir, env, appDir: APP_DIR });
    assert.equal(none.code, 1);
    assert.equal(none.stderr, 'legion: no Legion server runs for this workspace: start one with `legion serve --detach`\n');

    const { server, log, stop } = await hostInProcess(dir, env);
    try {
      const answer = await runCli(['run', '--to', 'worker', 'hello'], { cwd: dir, env, appDir: APP_DIR });
      assert.equal(answer.code, 0, answer.stderr);
      assert.equal(answer.stdout, 'hello from the worker, streamed in small pieces so a client sees many deltas arrive one after another.\n');
      assert.ok(log.some((l) => /client \d+: attached \(run\)/.test(l)), log.join('\n'));

      const json = await runCli(['run', '--to', 'worker', '--session', 'j', '--json', 'hello'], { cwd: dir, env, appDir: APP_DIR });
      assert.equal(json.code, 0, json.stderr);
      const events = json.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; seq: number });
      assert.ok(events.some((e) => e.type === 'text-delta'));
      assert.ok(events.some((e) => e.type === 'message-add'));

      const approve = await runCli(['run', '--approve', 'all', 'hello'], { cwd: dir, env, appDir: APP_DIR });
      assert.equal(approve.code, 2);
      assert.match(approve.stderr, /^legion: --approve does not apply to an attached run/);
      const fresh = await runCli(['run', '--new', 'hello'], { cwd: dir, env, appDir: APP_DIR });
      assert.equal(fresh.code, 2);
      assert.match(fresh.stderr, /^legion: the Legion server of this workspace serves run \S+: attach to it without --run\/--new, or add --no-attach to drive another run here\n$/);
      await until(() => server.clientCount() === 0, 'every `legion run` to detach');
    } finally {
      assert.equal(await stop('test over'), 0);
    }
  });
});
