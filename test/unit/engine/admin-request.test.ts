import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { adminHealth, listDeployments, registerDeployment } from '../../../src/engine/admin';

test('engine admin API: requests over node:http (loaded at the first request) reach the server and bring back status and JSON; a closed port is an error value', async () => {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => { body += d.toString('utf8'); });
    req.on('end', () => {
      seen.push(`${req.method} ${req.url} ${body}`);
      if (req.url === '/deployments') {
        res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'dp_1', services: [{ name: 'session' }] }));
      } else res.writeHead(200).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const admin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    assert.deepEqual(await adminHealth(admin), { ok: true, value: {} });
    assert.deepEqual(await registerDeployment(admin, 'http://127.0.0.1:9080'), { ok: true, value: { id: 'dp_1', services: ['session'] } });
    assert.deepEqual(seen, ['GET /health ', 'POST /deployments {"uri":"http://127.0.0.1:9080","force":false}']);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
  const down = await adminHealth(admin);
  assert.equal(down.ok, false);
  assert.match(!down.ok ? down.error : '', /^http:\/\/127\.0\.0\.1:\d+\/health: /);
});

test('engine admin API: a malformed deployments body ({}, wrong types, not JSON, empty) is an error value naming what is wrong, never a TypeError', async () => {
  const bodies = ['{}', '{"deployments":{}}', '{"deployments":[{"uri":"http://x"}]}', '{"deployments":[{"id":"dp_1","services":[{}]}]}', 'not json', '', 'null'];
  let answer = '';
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(answer));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const admin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    for (const body of bodies) {
      answer = body;
      const listed = await listDeployments(admin);
      assert.equal(listed.ok, false, body);
      assert.match(!listed.ok ? listed.error : '', /^http:\/\/127\.0\.0\.1:\d+\/deployments: (unexpected answer|not JSON)/, body);
      const registered = await registerDeployment(admin, 'http://127.0.0.1:9080');
      assert.equal(registered.ok, false, body);
    }
    answer = '{"deployments":{}}';
    const listed = await listDeployments(admin);
    assert.match(!listed.ok ? listed.error : '', /deployments/);
    answer = JSON.stringify({ deployments: [{ id: 'dp_1', uri: 'http://w:9080', services: [{ name: 'session', revision: 2 }], extra: true }, { id: 'dp_2', arn: 'lambda' }] });
    assert.deepEqual(await listDeployments(admin), { ok: true, value: [{ id: 'dp_1', uri: 'http://w:9080', services: ['session'] }, { id: 'dp_2', uri: '', services: [] }] });
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
