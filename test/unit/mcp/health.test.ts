import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { isTransportFailure, startIdlePinger } from '../../../src/mcp/health';

test('transport failures are told apart from the server\'s own JSON-RPC errors', () => {
  assert.equal(isTransportFailure(new TypeError('fetch failed')), true);
  assert.equal(isTransportFailure(new StreamableHTTPError(404, 'Error POSTing to endpoint: session not found')), true);
  assert.equal(isTransportFailure(new Error('SSE stream disconnected: TypeError: terminated')), true);
  assert.equal(isTransportFailure(new Error('Not connected')), true);
  assert.equal(isTransportFailure(new McpError(ErrorCode.InvalidParams, 'bad a')), false);
  assert.equal(isTransportFailure(new McpError(ErrorCode.InternalError, 'fetch failed upstream')), false, 'the server answered');
  assert.equal(isTransportFailure(new Error('Tool echo has an output schema but returned no structured content')), false);
  assert.equal(isTransportFailure('fetch failed'), false);
});

test('the idle pinger pings only after a quiet interval with nothing in flight; 0 never', async () => {
  let clock = 0;
  let inFlight = 0;
  let pings = 0;
  const pinger = startIdlePinger(10, () => inFlight, () => { pings += 1; }, () => clock);
  const tick = () => new Promise((r) => setTimeout(r, 15));
  try {
    clock = 5;
    await tick();
    assert.equal(pings, 0, 'not idle for a whole interval yet');
    clock = 20;
    inFlight = 1;
    await tick();
    assert.equal(pings, 0, 'a call in flight');
    inFlight = 0;
    await tick();
    assert.equal(pings, 1);
    pinger.touch(); // activity at 20
    clock = 25;
    await tick();
    assert.equal(pings, 1, 'touched recently');
  } finally {
    pinger.stop();
  }
  let never = 0;
  const off = startIdlePinger(0, () => 0, () => { never += 1; }, () => clock);
  clock = 1e9;
  await tick();
  off.stop();
  assert.equal(never, 0);
});
