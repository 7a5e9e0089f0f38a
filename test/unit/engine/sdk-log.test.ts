import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LogMetadata } from '@restatedev/restate-sdk';
import { workerSdkLogger } from '../../../src/engine/sdk-log';
import { startWorkerEndpoint } from '../../../src/engine/worker';
import { connect } from 'node:http2';
import { EventFeed } from '../../../src/engine/event-feed';

// The SDK's enums are types only in its exports: their values, as it passes them.
const meta = (level: 'debug' | 'info' | 'warn' | 'error', replaying = false): LogMetadata => ({ source: 'SYSTEM', level, replaying }) as unknown as LogMetadata;

test('a worker logs the SDK\'s warnings, errors and replays, not the two lines of every turn', () => {
  const lines: string[] = [];
  const log = workerSdkLogger({}, (line) => lines.push(line))!;
  log(meta('info'), 'Starting invocation.');
  log(meta('info'), 'Invocation completed successfully.');
  log(meta('debug'), 'a detail');
  log(meta('info'), 'Replaying invocation.');
  log(meta('warn'), 'Error when processing ctx.run \'tool 1\'.\n', new Error('boom'));
  log(meta('error', true), 'said while replaying: the default leaves these out too');
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  log(meta('error'), 'with a cycle', cyclic);
  assert.equal(lines.length, 3, lines.join(''));
  assert.match(lines[0]!, /INFO: Replaying invocation\./);
  assert.match(lines[1]!, /WARN: Error when processing ctx\.run 'tool 1'\.[\s\S]*Error: boom/);
  assert.match(lines[2]!, /ERROR: with a cycle \[object Object\]/);
  assert.ok(lines.every((l) => l.endsWith('\n')));
});

test('RESTATE_LOGGING set: the SDK\'s own logger at that level', () => {
  assert.equal(workerSdkLogger({ RESTATE_LOGGING: 'DEBUG' }, () => undefined), undefined);
});

test('the worker\'s endpoint hands the SDK its logger (the SDK\'s refusal of an unsigned request reaches it)', async () => {
  const lines: string[] = [];
  const endpoint = await startWorkerEndpoint({
    host: '127.0.0.1', port: 0, feed: new EventFeed(), runTurn: async () => ({ kind: 'done' }) as never,
    identityKeys: ['publickeyv1_5BYGELEnryj4UE99cU1PR7WdQ6G5EMsbbikyEHmvi3uN'], feedToken: 'x'.repeat(43),
    sdkLog: workerSdkLogger({}, (line) => lines.push(line)),
  });
  try {
    await new Promise<void>((resolve, reject) => {
      const session = connect(endpoint.url);
      session.on('error', reject);
      const stream = session.request({ ':path': '/discover' });
      stream.on('response', () => { session.close(); resolve(); });
      stream.end();
    });
  } finally {
    await endpoint.close();
  }
  assert.ok(lines.some((l) => /ERROR: Rejecting request as its JWT did not validate/.test(l)), lines.join(''));
  assert.ok(!lines.some((l) => /without validating request signatures/.test(l)), lines.join(''));
});
