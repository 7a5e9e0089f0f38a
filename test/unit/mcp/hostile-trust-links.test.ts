import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { link, mkdir, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { definitionFiles } from '../../../src/mcp/trust-files';
import { createTrustStore } from '../../../src/mcp/trust';
import { createHooksTrust } from '../../../src/conventions/hooks/trust';

/**
 * The scripts a trusted MCP server or hook runs unsandboxed are bound read-only in every
 * sandboxed call, so nothing rewrites them between the trust check and the process reading
 * them (docs/sandbox.md#trusted-files). A second hard link planted before you trust them (an
 * agent's `ln tools/mcp.js notes.txt`) is another name for the same file on the writable
 * mount: a sandboxed `echo … > notes.txt` rewrites the trusted script past the read-only bind.
 * Such a file is never trusted: the approval is refused, and a check fails while it lasts.
 */

test('an MCP server whose script has a second hard link cannot be trusted, nor pass a check', () =>
  withTempDir(async (raw) => {
    const dir = await realpath(raw);
    const ws = join(dir, 'ws');
    await mkdir(join(ws, 'tools'), { recursive: true });
    await writeFile(join(ws, 'tools', 'mcp.js'), 'console.log("server")\n');
    await link(join(ws, 'tools', 'mcp.js'), join(ws, 'notes.txt'));
    const store = createTrustStore(join(dir, 'user', 'mcp-trust.json'));
    const now = { fingerprint: 'f', files: await definitionFiles({ kind: 'stdio', command: 'node', args: ['tools/mcp.js'], env: {}, cwd: ws }, ws, {}) };
    await assert.rejects(store.trust(ws, 'tools', now), /tools\/mcp\.js has another hard link/);
    const check = await store.check(ws, 'tools', now);
    assert.equal(check.trusted, false);
  }));

test('a hard link planted after an approval (or an approval recorded before this check) fails the check, naming the file', () =>
  withTempDir(async (raw) => {
    const dir = await realpath(raw);
    const ws = join(dir, 'ws');
    await mkdir(join(ws, 'tools'), { recursive: true });
    await writeFile(join(ws, 'tools', 'mcp.js'), 'console.log("server")\n');
    const store = createTrustStore(join(dir, 'user', 'mcp-trust.json'));
    const spec = { kind: 'stdio' as const, command: 'node', args: ['tools/mcp.js'], env: {}, cwd: ws };
    await store.trust(ws, 'tools', { fingerprint: 'f', files: await definitionFiles(spec, ws, {}) });
    assert.deepEqual(await store.check(ws, 'tools', { fingerprint: 'f', files: await definitionFiles(spec, ws, {}) }), { trusted: true });
    await link(join(ws, 'tools', 'mcp.js'), join(ws, 'notes.txt'));
    const check = await store.check(ws, 'tools', { fingerprint: 'f', files: await definitionFiles(spec, ws, {}) });
    assert.equal(check.trusted, false);
    assert.match(check.trusted ? '' : check.reason, /tools\/mcp\.js has another hard link/);
  }));

test('workspace hooks whose script has a second hard link cannot be trusted', () =>
  withTempDir(async (raw) => {
    const dir = await realpath(raw);
    const ws = join(dir, 'ws');
    await mkdir(join(ws, '.claude', 'hooks'), { recursive: true });
    await writeFile(join(ws, '.claude', 'hooks', 'check.sh'), 'exit 0\n');
    await link(join(ws, '.claude', 'hooks', 'check.sh'), join(ws, 'notes.txt'));
    const hooks = createHooksTrust({ file: join(dir, 'user', 'hooks-trust.json'), workspaceRoot: ws, env: { PATH: '/usr/bin:/bin' } });
    const entries = [{ event: 'PreToolUse' as const, command: 'sh .claude/hooks/check.sh', timeoutMs: 5_000, file: join(ws, '.claude', 'settings.json'), fromWorkspace: true }];
    await assert.rejects(hooks.trust(entries), /\.claude\/hooks\/check\.sh has another hard link/);
    assert.equal((await hooks.check(entries)).trusted, false);
  }));

test('a link in the workspace to a file outside it with hard links of its own (a .venv/bin/python) is trusted as before', () =>
  withTempDir(async (raw) => {
    const dir = await realpath(raw);
    const ws = join(dir, 'ws');
    await mkdir(join(ws, '.venv', 'bin'), { recursive: true });
    await mkdir(join(dir, 'usr', 'bin'), { recursive: true });
    await writeFile(join(dir, 'usr', 'bin', 'python3.12'), '#!/bin/sh\n');
    await link(join(dir, 'usr', 'bin', 'python3.12'), join(dir, 'usr', 'bin', 'python3'));
    const { symlink } = await import('node:fs/promises');
    await symlink(join(dir, 'usr', 'bin', 'python3.12'), join(ws, '.venv', 'bin', 'python'));
    const store = createTrustStore(join(dir, 'user', 'mcp-trust.json'));
    const files = await definitionFiles({ kind: 'stdio', command: '.venv/bin/python', args: ['-m', 'server'], env: {}, cwd: ws }, ws, {});
    assert.deepEqual(Object.keys(files), ['.venv/bin/python']);
    await store.trust(ws, 'py', { fingerprint: 'f', files });
    assert.deepEqual(await store.check(ws, 'py', { fingerprint: 'f', files }), { trusted: true });
  }));
