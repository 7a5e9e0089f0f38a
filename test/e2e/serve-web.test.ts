import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bundlePath, ensureBundle } from '../helpers/bundle';
import { withTempDir } from '../helpers/tmp';
import { until } from '../helpers/processes';
import { setupServeWorkspace } from '../helpers/serve-workspace';
import { startWebhookServer } from '../helpers/webhook-server';
import { connectServer } from '../../src/serve/connection';
import { readServerInfo } from '../../src/serve/discovery';
import type { LegionEvent } from '../../src/events/types';

ensureBundle({ e2e: true });

/**
 * The built CLI: `legion serve --web 127.0.0.1:0` logs the page's URL once, keeps the token 0600,
 * answers only with it; a decision on the page wins over an attached client's; `notify` from the
 * config runs in the server and posts its run-end at `legion stop`.
 */
test('legion serve --web: URL logged once, token 0600, page decides first, attached client refused, notify posts run-end at stop', { timeout: 120_000 }, async () => {
  const hooks = await startWebhookServer();
  try {
    await withTempDir(async (dir) => {
      const env = await setupServeWorkspace(dir);
      await writeFile(join(dir, '.legion', 'config.yaml'), `notify:\n  - url: ${hooks.url}\n    events: [approval-request, run-end]\n`, { mode: 0o600 });
      const child = spawn(process.execPath, [bundlePath, 'serve', '--web', '127.0.0.1:0'], { cwd: dir, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let err = '';
      child.stderr!.on('data', (d) => { err += d; });
      const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
      try {
        await until(() => /serving run/.test(err), `the server to start: ${err}`, 60_000);
        const urls = [...err.matchAll(/legion serve: web: web page: (http:\/\/127\.0\.0\.1:(\d+)\/\?token=([A-Za-z0-9_-]{43}))\n/g)];
        assert.equal(urls.length, 1, err);
        const [, url, port, token] = urls[0]!;
        const file = join(dir, '.legion', 'web-token');
        assert.equal(readFileSync(file, 'utf8').trim(), token);
        assert.equal(statSync(file).mode & 0o777, 0o600);
        const base = `http://127.0.0.1:${port}`;
        assert.equal((await fetch(url!)).status, 200);
        assert.equal((await fetch(`${base}/`)).status, 401);
        assert.equal((await fetch(`${base}/api/state?token=${'x'.repeat(43)}`)).status, 401);

        const info = readServerInfo(join(dir, '.legion'));
        assert.equal(info.kind, 'server');
        const events: LegionEvent[] = [];
        const client = await connectServer({ socket: info.kind === 'server' ? info.info.socket : '', onEvent: (e) => void events.push(e) });
        const sent = (await client.request('send', { responderId: 'worker', text: 'write the file' })) as { sessionId: string };
        await until(() => events.some((e) => e.type === 'approval-request'), 'the approval request');
        const state = (await (await fetch(`${base}/api/state`, { headers: { 'x-legion-token': token! } })).json()) as { pending: { requestId: string }[] };
        assert.deepEqual(state.pending.map((p) => p.requestId), ['apr-1']);
        const decided = await fetch(`${base}/api/approvals`, { method: 'POST', headers: { 'x-legion-token': token!, 'content-type': 'application/json' }, body: JSON.stringify({ requestIds: ['apr-1'], decision: 'approved' }) });
        assert.equal(decided.status, 200);
        const late = (await client.request('resolveApprovals', { requestIds: ['apr-1'], decision: 'rejected' })) as { ok: boolean; error?: string };
        assert.equal(late.ok, false);
        assert.match(late.error ?? '', /already approved \(by remote:web\)/);
        assert.equal(await client.request('idle', { sessionId: sent.sessionId }), 'wrote it');
        assert.equal(readFileSync(join(dir, 'out.txt'), 'utf8'), 'hello');
        client.close();

        // Not spawnSync: the webhook server lives in this process and must answer the run-end meanwhile.
        const stopper = spawn(process.execPath, [bundlePath, 'stop'], { cwd: dir, env: { PATH: process.env.PATH, ...env }, stdio: 'ignore' });
        assert.equal(await new Promise((r) => stopper.on('exit', r)), 0);
        assert.equal(await exited, 0);
        const kinds = hooks.received.map((h) => (JSON.parse(h.body) as { event: { type: string } }).event.type);
        assert.deepEqual(kinds, ['approval-request', 'run-end'], err);
        assert.equal(err.match(/token=/g)?.length, 1, 'the token is printed once');
      } finally {
        child.kill('SIGKILL');
      }

      const bad = spawnSync(process.execPath, [bundlePath, 'serve', '--web', 'nope'], { cwd: dir, env: { PATH: process.env.PATH, ...env }, encoding: 'utf8', timeout: 60_000 });
      assert.equal(bad.status, 2);
      assert.match(bad.stderr, /^legion: --web: "nope" is not \[host:\]port \(e\.g\. 7420, 127\.0\.0\.1:7420, \[::1\]:7420\)\n$/m);
    });
  } finally {
    await hooks.close();
  }
});
