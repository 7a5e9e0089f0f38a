import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { restateServerBinary } from '../../../src/engine/local-engine';
import { httpTarget } from '../../../src/engine/http-text';
import { startWorkerEndpoint } from '../../../src/engine/worker';
import { EVENTS_PATH, EventFeed } from '../../../src/engine/event-feed';
import { FEED_NONCE_HEADER, FEED_TOKEN_FILE, feedProof, workspaceFeedToken } from '../../../src/engine/feed-token';
import * as http2 from 'node:http2';
import { listDeployments } from '../../../src/engine/admin';
import { withTempDir } from '../../helpers/tmp';
import { startEngine } from '../../helpers/engine-fixture';

/**
 * Another user of the machine against the local engine (docs/engine.md#who-may-talk-to-what): the
 * attack a tester ran by hand as uid 65534 — list the deployments, query the journal, register a
 * deployment, resolve an approval through the ingress, invoke the worker — run by a real child
 * process of that uid. The engine listens on unix sockets in its 0700 folder only (no TCP port);
 * the worker's endpoint takes only the engine's signed requests.
 */

const NOBODY = 65534;
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const skip = !restateServerBinary().ok ? 'restate-server is not installed for this platform'
  : !isRoot ? 'needs root to run a child process as another user (uid 65534)' : false;

/** The attacker's script: each request as `[name, {socketPath?|url, path, method, body}]`; prints name → status or error code. */
const ATTACKER = `
const http = require('node:http');
const http2 = require('node:http2');
const attempts = JSON.parse(process.argv[1]);
(async () => {
  const out = {};
  for (const [name, a] of attempts) {
    out[name] = await new Promise((resolve) => {
      if (a.file) {
        try { require('node:fs').readFileSync(a.file); resolve('read'); } catch (e) { resolve(e.code); }
        return;
      }
      if (a.feedProbe) {
        // The feed's handshake with a nonce of its own and a guessed proof: what comes back after it.
        const session = http2.connect(a.feedProbe);
        session.on('error', (e) => resolve(e.code || e.message));
        const stream = session.request({ ':path': a.path, ':method': 'POST', 'x-legion-feed-nonce': 'N'.repeat(43) });
        let status = 0;
        let bytes = 0;
        const end = () => { session.destroy(); resolve(status + ':' + bytes); };
        stream.on('response', (h) => { status = h[':status']; stream.end(a.proof); });
        stream.on('data', (d) => { bytes += d.length; });
        stream.on('close', end);
        setTimeout(end, 3000).unref();
        return;
      }
      if (a.h2) {
        const session = http2.connect(a.h2);
        setTimeout(() => { session.destroy(); resolve('timeout'); }, 5000).unref();
        session.on('error', (e) => resolve(e.code || e.message));
        const headers = { ':path': a.path, ':method': a.method, ...(a.method === 'POST' ? { 'content-type': 'application/vnd.restate.invocation.v5' } : {}), ...(a.authorization ? { authorization: a.authorization } : {}) };
        const stream = session.request(headers);
        stream.on('response', (h) => { session.destroy(); resolve(h[':status']); });
        stream.on('error', (e) => resolve(e.code || e.message));
        stream.end(a.body);
        return;
      }
      const options = { method: a.method, path: a.path, headers: { 'content-type': 'application/json', accept: 'application/json' }, timeout: 5000 };
      const request = a.socketPath ? http.request({ ...options, socketPath: a.socketPath }) : http.request(a.url, options);
      request.on('response', (r) => { r.resume(); resolve(r.statusCode); });
      request.on('error', (e) => resolve(e.code || e.message));
      request.on('timeout', () => { request.destroy(); resolve('timeout'); });
      request.end(a.body);
    });
  }
  process.stdout.write(JSON.stringify(out));
})();
`;

function attack(attempts: [string, Record<string, string | undefined>][], uid?: number): Promise<Record<string, number | string>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', ATTACKER, JSON.stringify(attempts)], {
      cwd: '/', stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      ...(uid === undefined ? {} : { uid, gid: uid }),
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
    child.once('error', reject);
    child.once('close', () => {
      try { resolve(JSON.parse(out) as Record<string, number | string>); } catch { reject(new Error(`attacker: ${out} ${err}`)); }
    });
  });
}

/** The TCP ports process `pid` listens on (its sockets' inodes in /proc/net/tcp{,6}, state LISTEN). */
function tcpListening(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch { /* closed meanwhile */ }
  }
  const ports: number[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && f[3] === '0A' && inodes.has(f[9]!)) ports.push(parseInt(f[1]!.split(':')[1]!, 16));
    }
  }
  return ports;
}

test('another local user reaches neither the local engine\'s admin API nor its ingress, nor runs a turn on its worker', { skip, timeout: 90_000 }, async () => {
  await withTempDir(async (dir) => {
    // A workspace others may enter (0755, as a home folder often is): only the engine's own folders guard it.
    chmodSync(dir, 0o755);
    mkdirSync(join(dir, '.legion'), { mode: 0o755 });
    chmodSync(join(dir, '.legion'), 0o755);
    const engine = await startEngine(dir);
    const made = workspaceFeedToken(join(dir, '.legion'));
    assert.ok(made.ok, made.ok ? '' : made.error);
    const feedToken = made.token;
    const feed = new EventFeed();
    const worker = await startWorkerEndpoint({
      host: '127.0.0.1', port: 0, feed, identityKeys: [engine.identityKey], feedToken, sdkLog: () => undefined,
      runTurn: async () => { throw new Error('a forged turn ran'); },
    });
    try {
      assert.deepEqual(tcpListening(engine.pid), [], 'the local engine listens on no TCP port');
      const admin = httpTarget(engine.admin);
      const ingress = httpTarget(engine.ingress);
      assert.ok('socketPath' in admin && 'socketPath' in ingress);
      const attempts: [string, Record<string, string | undefined>][] = [
        ['list deployments', { socketPath: admin.socketPath, path: '/deployments', method: 'GET' }],
        ['query the journal', { socketPath: admin.socketPath, path: '/query', method: 'POST', body: JSON.stringify({ query: 'SELECT id FROM sys_journal' }) }],
        ['register a deployment', { socketPath: admin.socketPath, path: '/deployments', method: 'POST', body: JSON.stringify({ uri: 'http://127.0.0.1:9' }) }],
        ['resolve an approval', { socketPath: ingress.socketPath, path: '/restate/awakeables/sign_1abc/resolve', method: 'POST', body: '{"decision":"approved"}' }],
        ['invoke the worker', { h2: worker.url, path: '/invoke/LegionSession/turn', method: 'POST', body: 'forged journal: the approval given' }],
        ['follow the feed', { h2: worker.url, path: EVENTS_PATH, method: 'GET' }],
        ['follow the feed with a guessed proof', { feedProbe: worker.url, path: EVENTS_PATH, proof: 'A'.repeat(43) }],
        ['follow the feed with the worker\'s own proof reflected', { feedProbe: worker.url, path: EVENTS_PATH, proof: feedProof(feedToken, 'worker', 'N'.repeat(43)) }],
        ['read the feed token', { file: join(dir, '.legion', 'engine', FEED_TOKEN_FILE) }],
      ];
      // The control: the engine's user (this process) reaches the engine the same way.
      const own = await attack(attempts.slice(0, 1));
      assert.equal(own['list deployments'], 200, JSON.stringify(own));
      const theirs = await attack(attempts, NOBODY);
      for (const name of ['list deployments', 'query the journal', 'register a deployment', 'resolve an approval']) {
        assert.equal(theirs[name], 'EACCES', `${name}: ${JSON.stringify(theirs)}`);
      }
      // The worker's port is TCP (the engine calls it there): the request identity refuses the forger,
      // the feed's token the reader.
      assert.equal(theirs['invoke the worker'], 401, JSON.stringify(theirs));
      assert.equal(theirs['follow the feed'], 401, JSON.stringify(theirs));
      // The handshake answers (its proof is of the caller's own nonce: worth nothing elsewhere), then not one byte of the feed.
      for (const name of ['follow the feed with a guessed proof', 'follow the feed with the worker\'s own proof reflected']) assert.equal(theirs[name], '200:0', `${name}: ${JSON.stringify(theirs)}`);
      assert.equal(theirs['read the feed token'], 'EACCES', JSON.stringify(theirs));
      // The control: with the hub's proof, the same probe gets the feed (its first line); the user reads the token.
      const hubs = await attack([['read the feed token', { file: join(dir, '.legion', 'engine', FEED_TOKEN_FILE) }]]);
      assert.deepEqual(hubs, { 'read the feed token': 'read' });
      const probe = http2.connect(worker.url);
      try {
        const got = await new Promise<string>((resolve) => {
          const stream = probe.request({ ':path': EVENTS_PATH, ':method': 'POST', [FEED_NONCE_HEADER]: 'N'.repeat(43) });
          stream.on('response', (h) => stream.end(feedProof(feedToken, 'hub', String(h[FEED_NONCE_HEADER]))));
          stream.on('data', (d: Buffer) => resolve(d.toString()));
        });
        assert.equal(got, '\n');
      } finally {
        probe.destroy();
      }
      const deployments = await listDeployments(engine.admin);
      assert.ok(deployments.ok && deployments.value.length === 0, 'nothing was registered');
    } finally {
      await worker.close();
      try { process.kill(-engine.pid, 'SIGKILL'); } catch { /* gone */ }
    }
  });
});
