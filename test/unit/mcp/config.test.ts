import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { homedir } from 'node:os';
import { userConfigDir } from '../../../src/storage/private-mode';
import { withTempDir } from '../../helpers/tmp';
import { readMcpJson, planServers, projectLayerServerNames } from '../../../src/mcp/servers';
import { expandVars } from '../../../src/mcp/expand';
import { loadConfig } from '../../../src/config/load';

test('expandVars: ${VAR}, ${VAR:-default}, missing names reported', () => {
  assert.deepEqual(expandVars('a ${X} b ${Y:-dflt} ${Z}', { X: '1' }), { text: 'a 1 b dflt ', missing: ['Z'] });
  assert.deepEqual(expandVars('${not valid} $X', {}), { text: '${not valid} $X', missing: [] });
});

test('.mcp.json: stdio and http entries read; unknown transport named with file:line; unknown key warned', async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, '.mcp.json');
    await writeFile(file, JSON.stringify({
      mcpServers: {
        local: { command: 'node', args: ['server.js'], env: { TOKEN: '${TOKEN}' } },
        remote: { type: 'http', url: 'https://example.test/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } },
        old: { type: 'sse', url: 'https://example.test/sse' },
        extra: { command: 'x', oauth: true },
      },
    }, null, 2));
    const read = await readMcpJson(file);
    assert.deepEqual(Object.keys(read.entries).sort(), ['extra', 'local', 'remote']);
    const sse = read.warnings.find((w) => w.includes('old'));
    assert.match(sse!, new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+: mcpServers\\.old\\.type: unknown transport "sse"`));
    assert.ok(read.warnings.some((w) => /:\d+: unknown key "mcpServers\.extra\.oauth"/.test(w)));
    const plan = planServers({ fromConfig: {}, fromMcpJson: read.entries, projectNames: new Set(), env: { TOKEN: 'secret-token' }, workspaceRoot: dir, mcpJsonFile: file });
    const local = plan.servers.find((s) => s.name === 'local')!;
    assert.deepEqual(local.transport, { kind: 'stdio', command: 'node', args: ['server.js'], env: { TOKEN: 'secret-token' }, cwd: dir, hostPrefix: userConfigDir({}, homedir()) });
    assert.equal(local.fromWorkspace, true);
    const remote = plan.servers.find((s) => s.name === 'remote')!;
    assert.deepEqual(remote.transport, { kind: 'http', url: 'https://example.test/mcp', headers: { Authorization: 'Bearer secret-token' } });
  });
});

test('.mcp.json syntax error: one line with file:line, nothing read', async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, '.mcp.json');
    await writeFile(file, '{\n  "mcpServers": {\n    "a": { "command": "x", }\n  ]\n}\n');
    const read = await readMcpJson(file);
    assert.deepEqual(read.entries, {});
    assert.equal(read.warnings.length, 1);
    assert.match(read.warnings[0]!, /\.mcp\.json:\d+: JSON syntax/);
  });
});

test('layers: config overrides .mcp.json per key; disabled drops; unset variable skips the server with a warning', () => {
  const plan = planServers({
    fromMcpJson: { gh: { command: 'gh-mcp', timeoutMs: 1000 }, off: { command: 'x' }, needs: { command: 'y', args: ['${MISSING_ONE}'] } },
    fromConfig: { gh: { args: ['--fast'], timeoutMs: 5000 }, off: { disabled: true }, mine: { type: 'http', url: 'http://127.0.0.1:1/mcp' } },
    projectNames: new Set(['mine']), env: {}, workspaceRoot: '/w', mcpJsonFile: '/w/.mcp.json',
  });
  assert.deepEqual(plan.disabled, ['off']);
  const gh = plan.servers.find((s) => s.name === 'gh')!;
  assert.equal(gh.timeoutMs, 5000);
  assert.deepEqual(gh.transport, { kind: 'stdio', command: 'gh-mcp', args: ['--fast'], env: {}, cwd: '/w', hostPrefix: userConfigDir({}, homedir()) });
  assert.equal(plan.servers.find((s) => s.name === 'mine')!.fromWorkspace, true, 'the project layer is the workspace too');
  assert.ok(!plan.servers.some((s) => s.name === 'needs'));
  assert.match(plan.warnings.join('\n'), /mcpServers\.needs: not set: \$\{MISSING_ONE\} in args\.0/);
});

test('a stdio entry without command and an http entry without url are refused by name', () => {
  const plan = planServers({ fromMcpJson: {}, fromConfig: { a: { args: ['x'] }, b: { type: 'http' } }, projectNames: new Set(), env: {}, workspaceRoot: '/w', mcpJsonFile: '/w/.mcp.json' });
  assert.equal(plan.servers.length, 0);
  assert.match(plan.warnings[0]!, /mcpServers\.a: a stdio server needs "command"/);
  assert.match(plan.warnings[1]!, /mcpServers\.b: an http server needs "url"/);
});

test('fingerprint changes with the command, not with timeouts or disabled', () => {
  const base = { fromMcpJson: {}, projectNames: new Set<string>(), env: {}, workspaceRoot: '/w', mcpJsonFile: '' };
  const a = planServers({ ...base, fromConfig: { s: { command: 'a' } } }).servers[0]!;
  const b = planServers({ ...base, fromConfig: { s: { command: 'a', timeoutMs: 9 } } }).servers[0]!;
  const c = planServers({ ...base, fromConfig: { s: { command: 'b' } } }).servers[0]!;
  assert.equal(a.fingerprint, b.fingerprint);
  assert.notEqual(a.fingerprint, c.fingerprint);
});

test('config layer: mcpServers validated with file:line; unknown transport named', async () => {
  await withTempDir(async (dir) => {
    await mkdir(join(dir, '.legion'));
    const defaults = join(dir, 'defaults.yaml');
    await writeFile(defaults, 'version: 1\n');
    const project = join(dir, '.legion', 'config.yaml');
    await writeFile(project, 'mcpServers:\n  gh:\n    type: websocket\n    url: ws://x\n');
    const loaded = await loadConfig({ defaults, user: join(dir, 'none.yaml'), project });
    assert.equal(loaded.ok, false);
    assert.match((loaded as { error: string }).error, new RegExp(`config\\.yaml:3: mcpServers\\.gh\\.type: unknown transport "websocket"`));
    await writeFile(project, 'mcpServers:\n  gh:\n    command: gh\n    args: [1]\n');
    const bad = await loadConfig({ defaults, user: join(dir, 'none.yaml'), project });
    assert.match((bad as { error: string }).error, /config\.yaml:4: mcpServers\.gh\.args\.0: /);
    await writeFile(project, 'mcpServers:\n  gh:\n    command: gh\n    disabled: true\n');
    const ok = await loadConfig({ defaults, user: join(dir, 'none.yaml'), project });
    assert.ok(ok.ok);
    assert.deepEqual(ok.ok && ok.config.mcpServers, { gh: { command: 'gh', disabled: true } });
    assert.deepEqual([...(await projectLayerServerNames(project))], ['gh']);
    await writeFile(project, 'mcpServers:\n  gh:\n    command: gh\n    pingIntervalMs: -5\n');
    const ping = await loadConfig({ defaults, user: join(dir, 'none.yaml'), project });
    assert.match((ping as { error: string }).error, /config\.yaml:4: mcpServers\.gh\.pingIntervalMs: /);
  });
});

test('pingIntervalMs: default 30 s, 0 allowed (off), not part of the trust fingerprint', () => {
  const base = { fromMcpJson: {}, projectNames: new Set<string>(), env: {}, workspaceRoot: '/w', mcpJsonFile: '' };
  const plain = planServers({ ...base, fromConfig: { s: { command: 'a' } } }).servers[0]!;
  const off = planServers({ ...base, fromConfig: { s: { command: 'a', pingIntervalMs: 0 } } }).servers[0]!;
  assert.equal(plain.pingIntervalMs, 30_000);
  assert.equal(off.pingIntervalMs, 0);
  assert.equal(plain.fingerprint, off.fingerprint);
});
