import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { assignToolNames, mcpToolName, PROVIDER_TOOL_NAME } from '../../../src/mcp/names';
import { providerSafeSchema } from '../../../src/mcp/json-schema';
import { convertCallResult } from '../../../src/mcp/result';
import { elicitationQuestion, parseElicitationAnswer } from '../../../src/mcp/elicit';
import { createServerLog } from '../../../src/mcp/server-log';
import { createTrustStore } from '../../../src/mcp/trust';

test('tool names: mcp__server__tool, sanitized, at most 64, unique after sanitizing and cutting', () => {
  assert.equal(mcpToolName('github', 'create_issue'), 'mcp__github__create_issue');
  assert.equal(mcpToolName('my.server', 'get sum/now'), 'mcp__my_server__get_sum_now');
  const long = 'x'.repeat(100);
  const a = mcpToolName('srv', long + 'a');
  const b = mcpToolName('srv', long + 'b');
  assert.ok(PROVIDER_TOOL_NAME.test(a) && PROVIDER_TOOL_NAME.test(b));
  assert.notEqual(a, b);
  const names = assignToolNames('s', ['a.b', 'a_b', 'a b'], new Set(['mcp__s__a_b_taken']));
  const values = [...names.values()];
  assert.equal(new Set(values).size, 3);
  for (const v of values) assert.match(v, PROVIDER_TOOL_NAME);
  assert.equal(names.get('a.b'), 'mcp__s__a_b');
  assert.deepEqual([...assignToolNames('s', ['t'], new Set(['mcp__s__t'])).values()].map((n) => n !== 'mcp__s__t'), [true]);
});

test('schemas: top level becomes type object with properties; compositions folded; arrays get items; $schema dropped', () => {
  assert.deepEqual(providerSafeSchema(undefined), { type: 'object', properties: {} });
  assert.deepEqual(providerSafeSchema({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { tags: { type: 'array' } }, required: ['tags'] }),
    { type: 'object', properties: { tags: { type: 'array', items: {} } }, required: ['tags'] });
  const folded = providerSafeSchema({ anyOf: [{ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, { type: 'object', properties: { b: { type: 'number' } } }] });
  assert.equal(folded.type, 'object');
  assert.equal(folded.anyOf, undefined);
  assert.deepEqual(Object.keys(folded.properties as object).sort(), ['a', 'b']);
  assert.equal(folded.required, undefined, 'anyOf requirements are the server\'s to check');
  const nested = providerSafeSchema({ type: 'object', properties: { x: { type: ['array', 'null'] }, y: { type: 'object', properties: { z: { type: 'array', items: { type: 'array' } } } } } });
  assert.deepEqual((nested.properties as any).x, { type: ['array', 'null'], items: {} });
  assert.deepEqual((nested.properties as any).y.properties.z, { type: 'array', items: { type: 'array', items: {} } });
  assert.deepEqual(providerSafeSchema({ type: 'object', properties: { a: {} }, required: ['a', 'ghost', 'a'] }).required, ['a']);
});

test('results: text, structured content as JSON, image placeholder with size, isError, resources', () => {
  assert.deepEqual(convertCallResult({ content: [{ type: 'text', text: 'Echo: hi' }] }), { content: 'Echo: hi' });
  const structured = convertCallResult({ content: [{ type: 'text', text: 'weather' }], structuredContent: { t: 1 } });
  assert.equal(structured.content, 'weather\n{\n  "t": 1\n}');
  const same = convertCallResult({ content: [{ type: 'text', text: '{"t":1}' }], structuredContent: { t: 1 } });
  assert.equal(same.content, '{"t":1}', 'the same JSON is not repeated');
  const image = convertCallResult({ content: [{ type: 'image', data: Buffer.alloc(3000).toString('base64'), mimeType: 'image/png' }] });
  assert.match(image.content, /^\[image: image\/png, 2\.9 kB/);
  assert.deepEqual(convertCallResult({ content: [{ type: 'text', text: 'bad' }], isError: true }), { content: 'bad', isError: true });
  assert.equal(convertCallResult({ content: [], isError: true }).isError, true);
  const res = convertCallResult({ content: [{ type: 'resource', resource: { uri: 'file:///a', text: 'body' } }, { type: 'resource_link', uri: 'x://y', name: 'y' }, { type: 'resource', resource: { uri: 'b://z', blob: 'AAAA', mimeType: 'application/gzip' } }] });
  assert.equal(res.content.split('\n')[0], '[resource <file:///a>]');
  assert.match(res.content, /\[resource link: y <x:\/\/y>\]/);
  assert.match(res.content, /\[resource <b:\/\/z>: application\/gzip, 3 B/);
});

test('elicitation: the question lists fields; answers become typed content or a decline', () => {
  const schema = { type: 'object', properties: { name: { type: 'string', description: 'Your name' }, agree: { type: 'boolean' }, age: { type: 'integer' } }, required: ['name'] };
  const q = elicitationQuestion('everything', { message: 'Please fill', requestedSchema: schema });
  assert.match(q, /MCP server "everything" asks: Please fill/);
  assert.match(q, /- name \(string, required\): Your name/);
  assert.deepEqual(parseElicitationAnswer('decline', schema), { action: 'decline' });
  assert.deepEqual(parseElicitationAnswer('{"name":"Ada","agree":true}', schema), { action: 'accept', content: { name: 'Ada', agree: true } });
  assert.deepEqual(parseElicitationAnswer('name: Ada\nagree: yes\nage: 36', schema), { action: 'accept', content: { name: 'Ada', agree: true, age: 36 } });
  assert.deepEqual(parseElicitationAnswer('Ada', { type: 'object', properties: { name: { type: 'string' } } }), { action: 'accept', content: { name: 'Ada' } });
});

test('server log: whole lines, secrets redacted, rotated past the limit', async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, 'logs', 'mcp-x.log');
    const log = createServerLog(file, { secrets: ['hunter2-secret'], maxBytes: 200 });
    log.write('token is hunter2-secret and ');
    log.write('ghp_abcdefghijklmnopqrstuvwxyz123456\nnext');
    const text = await readFile(file, 'utf8');
    assert.doesNotMatch(text, /hunter2-secret|abcdefghijklmnopqrstuvwxyz/);
    assert.match(text, /\[REDACTED\]/);
    assert.doesNotMatch(text, /next/, 'an unfinished line waits');
    for (let i = 0; i < 10; i++) log.write(`line ${i} ${'.'.repeat(40)}\n`);
    assert.ok((await stat(file)).size <= 200);
    assert.ok((await stat(`${file}.1`)).size > 0);
  });
});

test('trust: per workspace, name, fingerprint and file hashes; revocable; a damaged file trusts nothing', async () => {
  await withTempDir(async (dir) => {
    const store = createTrustStore(join(dir, 'legion', 'mcp-trust.json'));
    const def = (fingerprint: string, files: Record<string, string> = {}) => ({ fingerprint, files });
    const trusted = async (root: string, name: string, d: ReturnType<typeof def>) => (await store.check(root, name, d)).trusted;
    assert.deepEqual(await store.check('/w', 'gh', def('f1')), { trusted: false, changed: false, reason: 'not trusted yet' });
    await store.trust('/w', 'gh', def('f1', { 'tools/mcp.js': 'h1' }));
    assert.equal(await trusted('/w', 'gh', def('f1', { 'tools/mcp.js': 'h1' })), true);
    assert.deepEqual(await store.check('/w', 'gh', def('f2', { 'tools/mcp.js': 'h1' })), { trusted: false, changed: true, reason: 'its definition changed since you trusted it' });
    assert.deepEqual(await store.check('/w', 'gh', def('f1', { 'tools/mcp.js': 'h2' })), { trusted: false, changed: true, reason: 'tools/mcp.js changed since you trusted it' });
    assert.match((await store.check('/w', 'gh', def('f1', { 'tools/mcp.js': 'h1', 'tools/lib.js': 'h3' })) as { reason: string }).reason, /^tools\/lib\.js is new since you trusted it$/);
    assert.deepEqual(await store.check('/w', 'gh', def('f1')), { trusted: false, changed: true, reason: 'tools/mcp.js is gone since you trusted it' });
    assert.equal(await trusted('/other', 'gh', def('f1', { 'tools/mcp.js': 'h1' })), false);
    assert.equal(await store.revoke('/w', 'gh'), true);
    assert.equal(await trusted('/w', 'gh', def('f1', { 'tools/mcp.js': 'h1' })), false);
    const { writeFile } = await import('node:fs/promises');
    await writeFile(store.file, '{"version":1,"workspaces":{"/w":{"gh":7}}}');
    assert.equal(await trusted('/w', 'gh', def('f1')), false);
    // An approval from before files were recorded vouches for the definition, never for a file.
    await writeFile(store.file, '{"version":1,"workspaces":{"/w":{"gh":"f1"}}}');
    assert.equal(await trusted('/w', 'gh', def('f1')), true);
    assert.deepEqual(await store.check('/w', 'gh', def('f1', { 'tools/mcp.js': 'h1' })), { trusted: false, changed: true, reason: 'tools/mcp.js is new since you trusted it' });
  });
});

test('the vendor tool rules refuse what providerSafeSchema repairs (so the e2e check can fail)', async () => {
  const { anthropicToolsError, openaiToolsError } = await import('../../helpers/tool-schema-rules');
  const raw = { type: 'object', anyOf: [{ type: 'object', properties: { list: { type: 'array' } } }] };
  assert.match(anthropicToolsError({ tools: [{ name: 'mcp__s__t', input_schema: raw }] })!, /does not support oneOf, allOf, or anyOf/);
  assert.match(openaiToolsError({ tools: [{ type: 'function', function: { name: 'mcp__s__t', parameters: { type: 'object', properties: { list: { type: 'array' } } } } }] })!, /array schema missing items/);
  assert.match(anthropicToolsError({ tools: [{ name: 'mcp__my.server__t', input_schema: { type: 'object' } }] })!, /should match pattern/);
  const fixed = providerSafeSchema(raw);
  assert.equal(anthropicToolsError({ tools: [{ name: mcpToolName('my.server', 't'), input_schema: fixed }] }), null);
  assert.equal(openaiToolsError({ tools: [{ type: 'function', function: { name: mcpToolName('my.server', 't'), parameters: fixed } }] }), null);
});
