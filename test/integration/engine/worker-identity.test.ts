import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { connect } from 'node:http2';
import { join } from 'node:path';
import { restateServerBinary } from '../../../src/engine/local-engine';
import { startWorkerEndpoint, type WorkerEndpoint } from '../../../src/engine/worker';
import { EVENTS_PATH, EventFeed } from '../../../src/engine/event-feed';
import { requestFeed } from '../../../src/engine/feed-token';
import { identityKeyOf } from '../../../src/engine/identity';
import { registerDeployment } from '../../../src/engine/admin';
import { NO_IDENTITY_KEY } from '../../../src/cli/commands/worker';
import { withTempDir } from '../../helpers/tmp';
import { runLegion, startEngine } from '../../helpers/engine-fixture';
import { initWorkspace } from '../../../src/collective/init';
import { APP_DIR } from '../../helpers/crash-workspace';
import { testUserDir } from '../../helpers/trust';

const skip = restateServerBinary().ok ? false : 'restate-server is not installed for this platform';

/**
 * The worker's endpoint serves only requests the engine signed (docs/engine.md#who-may-talk-to-what).
 * Without it, anyone reaching the worker's port (another local user: loopback is shared) could
 * invoke `LegionSession/turn` with a journal of their own in which the approval's awakeable is
 * already completed: the tool would run without a person deciding.
 */

const newKey = (): KeyObject => generateKeyPairSync('ed25519').privateKey;
const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A v1 request identity JWT for `path` signed with `key`, claiming to be `kid`. */
function jwt(key: KeyObject, kid: string, path: string): string {
  const now = Math.floor(Date.now() / 1000);
  const head = `${b64({ typ: 'JWT', alg: 'EdDSA', kid })}.${b64({ aud: path, iat: now, nbf: now - 5, exp: now + 60 })}`;
  return `${head}.${sign(null, Buffer.from(head), key).toString('base64url')}`;
}

/** One HTTP/2 request to the worker, as an attacker would send it: its status, and whether the turn ran. */
function h2(url: string, path: string, headers: Record<string, string>, body?: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const session = connect(url);
    session.on('error', reject);
    const stream = session.request({ ':path': path, ':method': body ? 'POST' : 'GET', ...headers });
    stream.on('response', (h) => {
      const status = Number(h[':status']);
      session.destroy(); // a feed's stream stays open
      resolve(status);
    });
    stream.on('error', reject);
    stream.end(body);
  });
}

async function worker(identityKeys: readonly string[], ran: string[]): Promise<WorkerEndpoint> {
  return startWorkerEndpoint({
    host: '127.0.0.1', port: 0, feed: new EventFeed(), identityKeys, feedToken: 'x'.repeat(43),
    runTurn: async (input) => { ran.push(JSON.stringify(input)); return { kind: 'done' } as never; },
    sdkLog: () => undefined,
  });
}

test('a worker without a request identity key refuses to serve (fail-closed), and a malformed key too', async () => {
  await assert.rejects(worker([], []), /no request identity key/);
  await assert.rejects(worker(['ssh-ed25519 AAAA'], []), /not a request identity public key/);
});

test('forged invocations to a real worker are refused: unsigned, "unsigned" scheme, signed by another key under the engine\'s kid', async () => {
  const engineKey = newKey();
  const kid = identityKeyOf(engineKey);
  const ran: string[] = [];
  const endpoint = await worker([kid], ran);
  try {
    const invoke = '/invoke/LegionSession/turn';
    // The body a forger would send: the protocol's start message and a journal; refused before it is read.
    const forged = Buffer.from('forged journal: the approval awakeable completed with {"decision":"approved"}');
    const content = { 'content-type': 'application/vnd.restate.invocation.v5' };
    const attacker = newKey();
    const attempts: Record<string, Record<string, string>> = {
      'no signature': content,
      'scheme unsigned': { ...content, 'x-restate-signature-scheme': 'unsigned' },
      'signed by another key, claiming the engine\'s kid': { ...content, 'x-restate-signature-scheme': 'v1', 'x-restate-jwt-v1': jwt(attacker, kid, invoke) },
      'signed by another key under its own kid': { ...content, 'x-restate-signature-scheme': 'v1', 'x-restate-jwt-v1': jwt(attacker, identityKeyOf(attacker), invoke) },
      'the engine\'s signature for another path': { ...content, 'x-restate-signature-scheme': 'v1', 'x-restate-jwt-v1': jwt(engineKey, kid, '/discover') },
    };
    for (const [what, headers] of Object.entries(attempts)) {
      assert.equal(await h2(endpoint.url, invoke, headers, forged), 401, what);
    }
    // Discovery (what services a worker has) is refused too.
    assert.equal(await h2(endpoint.url, '/discover', { accept: 'application/vnd.restate.endpointmanifest.v4+json' }), 401);
    // The control: the engine's own signature is accepted (the check is not a refusal of everything).
    assert.equal(await h2(endpoint.url, '/discover', { accept: 'application/vnd.restate.endpointmanifest.v4+json', 'x-restate-signature-scheme': 'v1', 'x-restate-jwt-v1': jwt(engineKey, kid, '/discover') }), 200);
    assert.deepEqual(ran, [], 'no forged turn ran');
  } finally {
    await endpoint.close();
  }
});

test('a worker\'s event feed flows only to a hub proving the workspace\'s token', async () => {
  const token = 'T'.repeat(43);
  const feed = new EventFeed();
  const endpoint = await startWorkerEndpoint({ host: '127.0.0.1', port: 0, feed, identityKeys: [identityKeyOf(newKey())], feedToken: token, runTurn: async () => ({ kind: 'done' }) as never, sdkLog: () => undefined });
  try {
    assert.equal(await h2(endpoint.url, EVENTS_PATH, {}), 401, 'a plain GET');
    assert.equal(await h2(endpoint.url, EVENTS_PATH, { authorization: `Bearer ${token}` }), 401, 'the token itself is not how');
    const follow = (hubToken: string): Promise<{ proven: boolean; got: string }> => new Promise((resolve) => {
      const session = connect(endpoint.url);
      let proven = false;
      let got = '';
      const done = (): void => { session.destroy(); resolve({ proven, got }); };
      const stream = requestFeed(session, EVENTS_PATH, hubToken, () => { proven = true; }, done);
      stream.on('data', (d: Buffer) => { got += d.toString(); if (got.length > 0) setTimeout(done, 50); });
      stream.on('close', done);
    });
    assert.deepEqual(await follow(token), { proven: true, got: '\n' });
    assert.deepEqual(await follow('U'.repeat(43)), { proven: false, got: '' });
  } finally {
    await endpoint.close();
  }
  await assert.rejects(startWorkerEndpoint({ host: '127.0.0.1', port: 0, feed: new EventFeed(), identityKeys: [identityKeyOf(newKey())], feedToken: '', runTurn: async () => ({ kind: 'done' }) as never }), /no feed token/);
});

test('a real engine registers a worker that has its key, and cannot use a worker that has another', { skip, timeout: 90_000 }, async () => {
  await withTempDir(async (dir) => {
    const engine = await startEngine(dir);
    const ran: string[] = [];
    const right = await worker([engine.identityKey], ran);
    const wrong = await worker([identityKeyOf(newKey())], ran);
    try {
      const registered = await registerDeployment(engine.admin, right.url);
      assert.ok(registered.ok, registered.ok ? '' : registered.error);
      assert.ok(registered.value.services.includes('LegionSession'));
      const refused = await registerDeployment(engine.admin, wrong.url);
      assert.ok(!refused.ok, 'a worker expecting another engine\'s key was registered');
      assert.match(refused.error, /401|Unauthorized/i);
    } finally {
      await right.close();
      await wrong.close();
      try { process.kill(-engine.pid, 'SIGKILL'); } catch { /* gone */ }
    }
  });
});

test('legion worker without the engine\'s key: one line saying what to configure, exit 1', { timeout: 60_000 }, async () => {
  await withTempDir(async (dir) => {
    await initWorkspace({ appDir: APP_DIR, workspaceRoot: dir, userDir: testUserDir(dir) });
    await mkdir(join(dir, '.legion'), { recursive: true });
    await writeFile(join(dir, '.legion', 'config.yaml'), 'engine: { kind: restate, ingress: "http://127.0.0.1:9", admin: "http://127.0.0.1:9" }\n');
    const env = { HOME: dir, PATH: process.env.PATH ?? '/usr/bin:/bin' };
    const run = await runLegion(dir, env, ['worker', '--listen', '127.0.0.1:0', '--no-register']);
    assert.equal(run.code, 1, run.stderr);
    assert.equal(run.stderr, `legion: ${NO_IDENTITY_KEY}\n`);
    assert.equal(run.stdout, '');
    const half = await runLegion(dir, env, ['worker', '--listen', '127.0.0.1:0', '--admin', 'http://127.0.0.1:9']);
    assert.equal(half.code, 2, half.stderr);
    assert.match(half.stderr, /--admin and --identity-key go together/);
    // A feed token others may read: refused in one line, never served with.
    await mkdir(join(dir, '.legion', 'engine'), { recursive: true, mode: 0o700 });
    await writeFile(join(dir, '.legion', 'engine', 'feed-token'), `${'a'.repeat(43)}\n`, { mode: 0o644 });
    await chmod(join(dir, '.legion', 'engine', 'feed-token'), 0o644);
    const shared = await runLegion(dir, env, ['worker', '--listen', '127.0.0.1:0', '--no-register', '--admin', 'http://127.0.0.1:9', '--identity-key', 'publickeyv1_5BYGELEnryj4UE99cU1PR7WdQ6G5EMsbbikyEHmvi3uN']);
    assert.equal(shared.code, 1, shared.stderr);
    assert.match(shared.stderr, /^legion: the workers' feed token: .*feed-token must be yours and private \(0600\)[^\n]*\n$/);
    assert.equal(shared.stdout, '');
  });
});
