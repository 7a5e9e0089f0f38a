import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { plainRegistry, readTrustRegistry, registerTrusted, registerUsed, registrySchema, revokeEntries, trustRegistryFile } from '../../../src/storage/trust-registry';
import { ONE_SHOT } from '../../../src/storage/zod-validate';

/**
 * The registry's plain check (every start reads every entry: the schema took ~30 µs an entry)
 * against its schema, on registries as JSON gives them: it accepts nothing the schema refuses,
 * everything the schema accepts, and returns the schema's value (key order included, as the
 * registry is written back from it). A change to the schema that the check does not follow fails here.
 */
const ENTRY = { root: '/home/u/ws', ino: '2171333', born: '1795834579366633833', serial: 3, state: 'trusted', at: '2026-11-28T02:56:19.408Z' };

/** Values each field is tried with: valid ones, edges and hostile ones (all JSON). */
const VALUES: Record<string, unknown[]> = {
  root: ['/', '/a', 'a/b', '', ' /a', '/a\u0000b', `/${'x'.repeat(4095)}`, `/${'x'.repeat(4096)}`, '/ü/日本', 7, null, ['/a'], { p: '/a' }, true],
  ino: ['0', '1'.repeat(40), '1'.repeat(41), '', '12a', '-1', '1.5', '１２', '12\n', ' 12', 12, null],
  born: ['0', '9'.repeat(40), '9'.repeat(41), '', 'x', 0, null],
  serial: [0, 1, -0, -1, 1.5, 2 ** 53 - 1, 2 ** 53, 1e300, '3', null, true],
  state: ['trusted', 'revoked', 'used', 'Trusted', '', 'other', 1, null],
  at: ['', 'x'.repeat(64), 'x'.repeat(65), 5, null],
  why: ['', 'reason', 'w'.repeat(1000), 'w'.repeat(1001), 3, null, ['a']],
};

function entries(): unknown[] {
  const out: unknown[] = [ENTRY, { ...ENTRY, why: 'revoked because' }, {}, [], null, 'entry', 3, { ...ENTRY, extra: 1 }];
  for (const [key, values] of Object.entries(VALUES)) for (const value of values) out.push({ ...ENTRY, [key]: value });
  for (const key of Object.keys(ENTRY)) {
    const missing: Record<string, unknown> = { ...ENTRY };
    delete missing[key];
    out.push(missing);
  }
  out.push(JSON.parse(`{"__proto__": {"x": 1}, ${JSON.stringify(ENTRY).slice(1)}`));
  out.push(JSON.parse(`{"constructor": "x", ${JSON.stringify(ENTRY).slice(1)}`));
  return out;
}

function registries(): unknown[] {
  const out: unknown[] = [];
  for (const e of entries()) out.push({ version: 1, serial: 4, workspaces: [ENTRY, e] });
  out.push({ version: 1, serial: 0, workspaces: [] });
  for (const version of [2, '1', 0, null, true]) out.push({ version, serial: 1, workspaces: [] });
  for (const serial of VALUES.serial) out.push({ version: 1, serial, workspaces: [ENTRY] });
  for (const workspaces of [null, {}, 'x', { 0: ENTRY }]) out.push({ version: 1, serial: 1, workspaces });
  out.push({ version: 1, serial: 1, workspaces: [], extra: true }, { version: 1, workspaces: [] }, { serial: 1, workspaces: [] }, { version: 1, serial: 1 });
  out.push([], null, 'registry', 1, JSON.parse('{"__proto__": {}, "version": 1, "serial": 1, "workspaces": []}'));
  return out;
}

test('trust registry: the plain check and the schema agree on every registry tried, and return the same value', () => {
  let accepted = 0;
  for (const registry of registries()) {
    const json = JSON.parse(JSON.stringify(registry) ?? 'null') as unknown;
    const bySchema = registrySchema().safeParse(json, ONE_SHOT);
    const plain = plainRegistry(json);
    const shown = JSON.stringify(registry)?.slice(0, 300);
    assert.equal(plain !== undefined, bySchema.success, `plain ${plain ? 'accepts' : 'refuses'}, the schema ${bySchema.success ? 'accepts' : 'refuses'}: ${shown}`);
    if (plain && bySchema.success) {
      accepted++;
      assert.deepEqual(plain, bySchema.data, shown);
      assert.equal(JSON.stringify(plain), JSON.stringify(bySchema.data), `written back the same: ${shown}`);
    }
  }
  assert.ok(accepted > 20, `${accepted} accepted`);
});

test('trust registry: a registry Legion wrote (trusted, used and revoked entries) reads by the plain check, and reads the same as before', async () => {
  await withTempDir(async (dir) => {
    const userDir = join(dir, 'home');
    const file = trustRegistryFile(userDir);
    const roots = ['a', 'b', 'c'].map((n) => join(dir, n));
    for (const root of roots) await mkdir(join(root, '.legion'), { recursive: true });
    assert.ok(registerTrusted(file, roots[0]!).ok);
    assert.ok(registerUsed(file, roots[1]!).ok);
    const trusted = registerTrusted(file, roots[2]!);
    assert.ok(trusted.ok);
    assert.ok(revokeEntries(file, trusted.registry.workspaces.filter((e) => e.root === roots[2]), 'a reason').ok);
    const json = JSON.parse(await readFile(file, 'utf8')) as unknown;
    const plain = plainRegistry(json);
    assert.ok(plain, 'the plain check reads what Legion writes (no schema at a start)');
    assert.deepEqual(plain.workspaces.map((e) => e.state), ['trusted', 'used', 'revoked']);
    const read = readTrustRegistry(file);
    assert.ok(read.ok);
    assert.deepEqual(read.registry, registrySchema().parse(json));
  });
});
