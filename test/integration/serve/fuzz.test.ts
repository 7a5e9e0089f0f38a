import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { composeApp } from '../../../src/cli/compose';
import { startServer } from '../../../src/serve/server';
import { connectServer } from '../../../src/serve/connection';
import { attachRemote } from '../../../src/serve/remote-core';
import { METHODS, parseServerLine } from '../../../src/serve/protocol';
import { withTempDir } from '../../helpers/tmp';
import { until } from '../../helpers/processes';
import { prng } from '../../helpers/prng';
import { serveContext, setupServeWorkspace } from '../../helpers/serve-workspace';

// Protocol fuzz over the real socket (docs/serve.md#protocol): whatever a client sends, the
// server answers with protocol lines and keeps serving; whatever a server sends, a client ends
// the connection with a reason and never throws.

const VALID = [
  '{"hello":{"protocol":1}}',
  '{"hello":{"protocol":1,"since":3}}',
  '{"id":1,"method":"sessions"}',
  '{"id":2,"method":"send","params":{"responderId":"worker","text":"hi"}}',
  '{"id":3,"method":"resolveApprovals","params":{"requestIds":["1"],"decision":"approved"}}',
  '{"id":4,"method":"snapshot","params":{}}',
];

/** One hostile client's bytes: random bytes, truncated lines, unknown methods, wrong types, valid lines between. */
function hostileChunks(random: () => number, withHugeLine: boolean): Buffer[] {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const values = [null, 0, -1, 1.5, 'x', '', [], {}, true, 1e308, '__proto__', 'constructor', { hello: 1 }, 'a'.repeat(5000)];
  const out: Buffer[] = [];
  for (let i = 0; i < 25; i++) {
    const kind = random();
    if (kind < 0.2) out.push(Buffer.from(Array.from({ length: 1 + Math.floor(random() * 300) }, () => Math.floor(random() * 256))));
    else if (kind < 0.35) {
      const base = pick(VALID);
      out.push(Buffer.from(base.slice(0, Math.floor(random() * base.length)) + (random() < 0.5 ? '\n' : '')));
    } else if (kind < 0.5) out.push(Buffer.from(JSON.stringify({ id: pick(values), method: `m${Math.floor(random() * 1e6)}` }) + '\n'));
    else if (kind < 0.8) {
      out.push(Buffer.from(JSON.stringify({
        id: random() < 0.7 ? i : pick(values), method: pick(METHODS),
        params: { sessionId: pick(values), responderId: pick(values), text: pick(values), requestIds: pick(values), decision: pick(values), runId: pick(values), query: pick(values), name: pick(values) },
      }) + '\n'));
    } else if (kind < 0.9) out.push(Buffer.from(JSON.stringify({ hello: { protocol: pick([1, 2, '1', null]), since: pick(values) } }) + '\n'));
    else out.push(Buffer.from(pick(VALID) + '\n'));
  }
  if (withHugeLine) {
    const huge = Buffer.alloc(10 * 1024 * 1024, 0x5b);
    for (let off = 0; off < huge.length; off += 1 << 20) out.splice(Math.floor(out.length / 2), 0, huge.subarray(off, off + (1 << 20)));
  }
  return out;
}

/** Send the chunks, then end (or cut) the connection; resolve with every line the server answered once it closed. */
function hostileClient(socket: string, chunks: Buffer[], cut: boolean): Promise<string[]> {
  return new Promise((resolve) => {
    const s: Socket = connect(socket);
    let text = '';
    s.on('data', (d) => { text += d.toString('utf8'); });
    s.on('error', () => undefined);
    s.on('close', () => resolve(text.split('\n').filter((l) => l !== '')));
    s.once('connect', () => {
      for (const c of chunks) s.write(c);
      if (cut) s.destroy();
      else s.end();
    });
  });
}

test('fuzz, client → server: random bytes, truncated lines, 10 MB lines, unknown methods, wrong types from 48 clients: every answer is a protocol line, 0 crashes, the server keeps serving', { timeout: 180_000 }, async () => {
  await withTempDir(async (dir) => {
    const env = await setupServeWorkspace(dir);
    const app = await composeApp(serveContext(dir, env));
    const socket = join(dir, '.legion', 'serve.sock');
    const log: string[] = [];
    const server = await startServer({ core: app.core, history: app.history, workflows: app.workflows, socketPath: socket, workspace: dir, version: 'test', log: (l) => log.push(l) });
    try {
      const random = prng(1616);
      const kinds = new Map<string, number>();
      for (let batch = 0; batch < 6; batch++) {
        const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => hostileClient(socket, hostileChunks(random, i === 0 && batch % 2 === 0), random() < 0.3)));
        for (const lines of answers) {
          for (const l of lines) {
            const parsed = parseServerLine(l);
            assert.ok(parsed.ok, `the server answered with a line a client refuses: ${l.slice(0, 300)}`);
            const kind = parsed.message.kind === 'error' ? `error:${parsed.message.error.kind}` : parsed.message.kind;
            kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
          }
        }
      }
      for (const expected of ['welcome', 'error:bad-json', 'error:bad-request', 'error:unknown-method', 'error:bad-params', 'error:oversize', 'error:protocol']) {
        assert.ok((kinds.get(expected) ?? 0) > 0, `no ${expected} among ${JSON.stringify([...kinds])}`);
      }
      await until(() => server.clientCount() === 0, 'every hostile client to be gone', 30_000);
      // Still serving, and the agents still work.
      const c = await connectServer({ socket, onEvent: () => undefined });
      const sent = (await c.request('send', { responderId: 'worker', text: 'hello after the storm', name: 'after' })) as { ok: boolean; sessionId: string };
      assert.equal(sent.ok, true);
      assert.equal(await c.request('idle', { sessionId: sent.sessionId }), 'hello from the worker, streamed in small pieces so a client sees many deltas arrive one after another.');
      c.close();
    } finally {
      await server.close('test over');
      await app.close('test over');
    }
  });
});

/** A fake server: every connection gets `script(socket, lineFromClient)` called for each line the client sends. */
async function fakeServer(path: string, onLine: (s: Socket, line: string, n: number) => void): Promise<Server> {
  const server = createServer((s) => {
    let buf = '';
    let n = 0;
    s.on('error', () => undefined);
    s.on('data', (d) => {
      buf += d.toString('utf8');
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) { const l = buf.slice(0, nl); buf = buf.slice(nl + 1); onLine(s, l, n++); }
    });
  });
  await new Promise<void>((r) => server.listen(path, r));
  return server;
}

const WELCOME = JSON.stringify({ welcome: { protocol: 1, runId: 'r1', workspace: '/w', pid: 1, version: 't', lastSeq: 0, replay: 'snapshot' } });
const BAD_EVENT = '{"event":{"seq":1,"at":"x","runId":"r1","type":"message-add","sessionId":"s","message":{"role":"robot"}}}';
const EMPTY_SNAPSHOT = {
  runId: 'r1', lastSeq: 0, participants: [], sessions: [], histories: {}, contextRecords: {}, pendingApprovals: [],
  usage: { run: { calls: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0, partial: false, unpricedModels: [] }, sessions: {} },
};

test('fuzz, server → client: garbage, bad envelopes, malformed event bodies, a 10 MB line: the client ends the connection with the reason, never throws', { timeout: 90_000 }, async () => {
  await withTempDir(async (dir) => {
    const random = prng(61);
    const garbage: string[] = [
      Buffer.from(Array.from({ length: 200 }, () => Math.floor(random() * 256))).toString('latin1'),
      '{"welcome":{"protocol":2}}',
      '{"event":{"seq":1,"at":"x","runId":"r1","type":"text-delta","sessionId":"s","participantId":"p","text":5}}',
      '{"event":{"seq":1,"at":"x","runId":"r1","type":"message-add","sessionId":"s"}}',
      '{"event":{"seq":1,"at":"x","runId":"r1","type":"approval-request","requestId":"1"}}',
      '{"id":1,"result":1,"extra":true}',
      `{"error":{"kind":"x","message":"${'m'.repeat(200_000)}"}}`,
      `"${'a'.repeat(10 * 1024 * 1024)}"`,
      '[]',
      'null',
    ];
    for (const [i, bad] of garbage.entries()) {
      const path = join(dir, `fake-${i}.sock`);
      // Half of them say welcome first, so the bad line comes to a connected client.
      const welcomed = i % 2 === 0;
      const server = await fakeServer(path, (s, _l, n) => { if (n === 0) s.write(welcomed ? `${WELCOME}\n${bad}\n` : `${bad}\n`); });
      try {
        let closed: string | undefined;
        const attempt = connectServer({ socket: path, onEvent: () => assert.fail('no event of a bad line reaches the front end'), onClose: (reason) => { closed = reason; }, timeoutMs: 30_000 });
        if (welcomed) {
          const c = await attempt;
          await until(() => closed !== undefined, `the client to end the connection after line ${i}`, 30_000);
          assert.equal(c.isOpen, false);
          assert.match(closed!, /^the server sent a (bad line|line that is not JSON)/, `line ${i}`);
        } else {
          await assert.rejects(attempt, /^Error: the server sent a (bad line|line that is not JSON)/, `line ${i}`);
        }
      } finally {
        await new Promise((r) => server.close(r));
      }
    }

    // A remote core (what the TUI holds) fed a malformed event: a notice says so, nothing reaches the UI broken, and it
    // does not try again (the replay after `since` would bring the same line: a loop of reconnections).
    const path = join(dir, 'fake-core.sock');
    let connections = 0;
    const server = await fakeServer(path, (s, l, n) => {
      if (n === 0) {
        connections += 1;
        const hello = JSON.parse(l) as { hello: { since?: number } };
        s.write(`${WELCOME.replace('"replay":"snapshot"', `"replay":"${hello.hello.since === undefined ? 'snapshot' : 'since'}"`)}\n`);
        if (hello.hello.since !== undefined) s.write(`${BAD_EVENT}\n`);
        return;
      }
      // The snapshot first; the bad event comes when the front end asks anything next.
      const id = (JSON.parse(l) as { id: number }).id;
      s.write(n === 1 ? `${JSON.stringify({ id, result: EMPTY_SNAPSHOT })}\n` : `${BAD_EVENT}\n`);
    });
    try {
      const { core, history } = await attachRemote({ socket: path });
      const seen: string[] = [];
      core.bus.subscribeAll((e) => void seen.push(e.type === 'notice' ? e.message : e.type));
      const asked = history.runs().then(() => 'answered', (e: Error) => e.message);
      assert.match(await core.closed, /^the server sent a bad line: a message-add event \(seq 1\) is malformed: message\.role/);
      assert.deepEqual(seen.filter((s) => s !== 'message-add').length, seen.length, 'the malformed event never reached the bus');
      assert.ok(seen.some((m) => /^the Legion server went away \(the server sent a bad line/.test(m)), seen.join('\n'));
      assert.deepEqual(core.history('s'), []);
      assert.match(await asked, /^the server sent a bad line/, 'the request waiting is told why');
      // Reconnection attempts would start 100 ms after the end: give them ten times that to show up.
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal(connections, 1, 'no reconnection to a server that broke the protocol');
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
