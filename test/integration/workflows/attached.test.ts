import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { attachRemote } from '../../../src/serve/remote-core';
import type { LegionEvent } from '../../../src/events/types';
import { runCli } from '../../helpers/cli';
import { withTempDir } from '../../helpers/tmp';
import { until } from '../../helpers/processes';
import { APP_DIR } from '../../helpers/crash-workspace';
import { hostInProcess, setupServeWorkspace } from '../../helpers/serve-workspace';

/**
 * Workflows through `legion serve` (docs/workflows.md#cli, #core-interface): `legion run
 * --workflow` attached to the server, and the remote core an attached TUI uses (list, start,
 * cancel over the socket).
 */

const SCRIPT = `version: 1
replies:
  - { agent: worker, when: "^outline", text: "OUTLINE[{{lastText}}]", repeat: true }
  - { agent: worker, when: "^write", text: "TEXT[{{lastText}}]", repeat: true }
  - { agent: worker, when: "^explode", text: "x", error: { message: "503 overloaded", status: 503 }, repeat: true }
  - { agent: worker, when: "^slow", text: "${'slowly, ten at a time. '.repeat(300)}", chunkSize: 10, delayMs: 20, repeat: true }
  - { agent: worker, when: "^lag", text: "${'lagging. '.repeat(40)}", chunkSize: 10, delayMs: 100, repeat: true }
`;

const WORKFLOWS: Record<string, string> = {
  doc: `description: outline then write
steps:
  - { id: outline, agent: worker, prompt: "outline {{input}}" }
  - { id: write, agent: worker, after: [outline], prompt: "write {{steps.outline.output}}" }
`,
  broken: `steps:
  - { id: a, agent: worker, prompt: "explode" }
  - { id: b, agent: worker, after: [a], prompt: "write {{steps.a.output}}" }
`,
  tail: `steps:
  - { id: a, agent: worker, prompt: "lag" }
  - { id: b, agent: worker, prompt: "outline b" }
`,
  pair: `steps:
  - { id: a, agent: worker, prompt: "slow one" }
  - { id: b, agent: worker, prompt: "slow two" }
  - { id: join, agent: worker, after: [a, b], prompt: "write {{steps.a.output}}" }
`,
};

test('workflows through legion serve: legion run --workflow attached (output, --json, a failed step), and list, start, cancel from a remote core', { timeout: 90_000 }, async () => {
  await withTempDir(async (dir) => {
    const env = await setupServeWorkspace(dir);
    await writeFile(env.LEGION_FAUX_SCRIPT!, SCRIPT);
    await mkdir(join(dir, '.legion', 'workflows'), { recursive: true, mode: 0o700 });
    for (const [name, text] of Object.entries(WORKFLOWS)) await writeFile(join(dir, '.legion', 'workflows', `${name}.yaml`), text, { mode: 0o600 });

    const { server, log, stop } = await hostInProcess(dir, env);
    try {
      const run = (argv: string[]) => runCli(['run', ...argv], { cwd: dir, env, appDir: APP_DIR });
      const plain = await run(['--workflow', 'doc', 'the', 'notes']);
      assert.equal(plain.code, 0, plain.stderr);
      assert.equal(plain.stdout, 'TEXT[write OUTLINE[outline the notes]]\n');
      assert.ok(log.some((l) => /client \d+: attached \(run\)/.test(l)), log.join('\n'));

      const json = await run(['--workflow', 'doc', '--json', 'more']);
      assert.equal(json.code, 0, json.stderr);
      const events = json.stdout.trim().split('\n').map((l) => JSON.parse(l) as LegionEvent);
      const kinds = events.filter((e) => e.type.startsWith('workflow')).map((e) => (e.type === 'workflow-step-start' || e.type === 'workflow-step-end' ? `${e.type}:${e.stepId}` : e.type));
      assert.deepEqual(kinds, ['workflow-start', 'workflow-step-start:outline', 'workflow-step-end:outline', 'workflow-step-start:write', 'workflow-step-end:write', 'workflow-end']);

      const failed = await run(['--workflow', 'broken']);
      assert.equal(failed.code, 3, failed.stderr);
      assert.equal(failed.stdout, '');
      assert.match(failed.stderr, /^legion: workflow broken: step a failed: .*503 overloaded/m);
      assert.match(failed.stderr, /^legion: workflow broken: not run: b$/m);
      assert.match((await run(['--workflow', 'nope', 'x'])).stderr, /^legion: no workflow "nope"/);
      await until(() => server.clientCount() === 0, 'every `legion run` to detach');

      // The remote core of an attached TUI: Ctrl+N lists and starts, Esc twice cancels.
      const { core: remote, workflows } = await attachRemote({ socket: server.socketPath });
      try {
        const seen: LegionEvent[] = [];
        remote.bus.subscribeAll((e) => void seen.push(e));
        assert.deepEqual((await workflows.list()).map((w) => w.name), ['broken', 'doc', 'pair', 'parallel-implement', 'parallel-review', 'plan-implement-review', 'tail']);

        // The output is the last step's recorded one (the workflow-end event carries it), as in a
        // local run, even when its session had another turn before the workflow ended.
        const tail = run(['--workflow', 'tail']);
        await until(() => seen.some((e) => e.type === 'workflow-step-end' && e.name === 'tail' && e.stepId === 'b'), 'step b of tail to end');
        const more = remote.send('worker', 'write more', 'tail-b');
        assert.ok(more.ok, JSON.stringify(more));
        assert.equal(await remote.idle(more.sessionId), 'TEXT[write more]');
        const tailed = await tail;
        assert.equal(tailed.code, 0, tailed.stderr);
        assert.equal(tailed.stdout, 'OUTLINE[outline b]\n');
        const tailEnd = seen.find((e) => e.type === 'workflow-end' && e.name === 'tail');
        assert.ok(tailEnd && tailEnd.type === 'workflow-end');
        assert.equal(tailEnd.output, 'OUTLINE[outline b]');

        // Ctrl+C of the attached run cancels the workflow on the server: exit 130, as a local run.
        const before = new Set(process.listeners('SIGINT'));
        const paired = run(['--workflow', 'pair']);
        const streaming = (id: string) => seen.some((e) => e.type === 'text-delta' && e.sessionId === id);
        await until(() => streaming('session-user__worker__pair-a') && streaming('session-user__worker__pair-b'), 'both steps of the attached pair streaming');
        const ctrlC = process.listeners('SIGINT').filter((l) => !before.has(l));
        assert.equal(ctrlC.length, 1, 'the attached run listens for Ctrl+C');
        (ctrlC[0] as () => void)();
        const cancelled = await paired;
        assert.equal(cancelled.code, 130, cancelled.stderr);
        assert.match(cancelled.stderr, /^legion: interrupting… \(Ctrl\+C again to detach\)$/m);
        assert.match(cancelled.stderr, /^legion: workflow pair: step a cancelled: /m);
        assert.match(cancelled.stderr, /^legion: workflow pair: step b cancelled: /m);
        assert.match(cancelled.stderr, /legion: interrupted\n$/);
        assert.equal(cancelled.stdout, '');
        assert.equal(process.listeners('SIGINT').filter((l) => !before.has(l)).length, 0, 'the handler is removed');
        seen.length = 0;

        assert.deepEqual(await workflows.start('doc', ''), { ok: false, error: 'workflow doc needs an input (its prompts use {{input}})' });
        const started = await workflows.start('pair', '');
        assert.ok(started.ok);
        await until(() => streaming('session-user__worker__pair-a') && streaming('session-user__worker__pair-b'), 'both steps streaming');
        assert.equal(workflows.cancel(started.workflowId), true);
        await until(() => seen.some((e) => e.type === 'workflow-end'), 'the workflow to end');
        const end = seen.find((e) => e.type === 'workflow-end');
        assert.ok(end && end.type === 'workflow-end');
        assert.deepEqual([end.status, end.failed.sort(), end.skipped], ['cancelled', ['a', 'b'], ['join']]);
      } finally {
        await remote.shutdown('test over');
      }
    } finally {
      assert.equal(await stop('test over'), 0);
    }
  });
});
