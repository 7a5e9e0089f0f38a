import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { probeSandbox, systemProbeDeps, type ProbeDeps } from '../../../../src/tools/sandbox/probe';
import { createShellSandbox, sandboxNotice, type SandboxSettings } from '../../../../src/tools/sandbox/sandbox';
import { createShellTool } from '../../../../src/tools/builtin/shell';
import { executeTool } from '../../../../src/tools/execute-tool';
import { composeSandbox } from '../../../../src/cli/compose-sandbox';
import { configSchema } from '../../../../src/config/schema';
import { createRuleSet } from '../../../../src/authz/rules/rule-set';
import { DEFAULT_SECRET_PATTERNS } from '../../../../src/tools/sandbox/secret-patterns';
import { makeToolContext } from '../../../helpers/tool-context';
import { withTempDir } from '../../../helpers/tmp';

/** This machine's probe deps, with a PATH that has no bubblewrap on it. */
const noBwrap: ProbeDeps = { ...systemProbeDeps(), path: '/nonexistent-legion-bin' };

function shellWith(settings: SandboxSettings, probe: Awaited<ReturnType<typeof probeSandbox>> | undefined) {
  const sandbox = createShellSandbox({ settings, ...(probe ? { probe } : {}), home: '/nonexistent-home', secretPatterns: DEFAULT_SECRET_PATTERNS, tempDir: tmpdir() });
  return { sandbox, shell: createShellTool({ sandbox, killGraceMs: 200, drainMs: 50 }) };
}

test('probe: a PATH without bwrap, another platform, user namespaces refused', async () => {
  const missing = await probeSandbox(noBwrap);
  assert.deepEqual(missing.kind === 'unavailable' && missing.cause, 'bwrap-missing');
  assert.match(missing.kind === 'unavailable' ? missing.reason : '', /bubblewrap is not installed/);
  const mac = await probeSandbox({ ...noBwrap, platform: 'darwin' });
  assert.equal(mac.kind === 'unavailable' && mac.cause, 'unsupported-platform');
  const refused = await probeSandbox({
    platform: 'linux', path: '/opt/fake', isExecutable: (file) => file === '/opt/fake/bwrap',
    run: async () => ({ code: 1, output: 'bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.\n' }),
  });
  assert.equal(refused.kind === 'unavailable' && refused.cause, 'userns-disabled');
  assert.match(refused.kind === 'unavailable' ? refused.reason : '', /user namespaces are disabled.*No permissions/);
});

test('auto without bubblewrap: shell runs unconfined, marked so, and the start notice says why', async () => {
  const probe = await probeSandbox(noBwrap);
  const { sandbox, shell } = shellWith({ mode: 'auto', network: 'none' }, probe);
  assert.equal(sandbox.state.kind, 'unsandboxed');
  assert.equal(shell.sandboxed, false);
  assert.match(sandboxNotice({ mode: 'auto', network: 'none' }, sandbox.state)?.message ?? '', /WITHOUT a sandbox: bubblewrap is not installed/);
  await withTempDir(async (dir) => {
    const result = await executeTool(shell, { command: 'echo ran > out.txt && cat out.txt' }, makeToolContext(dir));
    assert.equal(result.isError, undefined, result.content);
    assert.ok(existsSync(join(dir, 'out.txt')));
  });
});

test('on without bubblewrap: shell refuses, names the cause, and runs nothing', async () => {
  const probe = await probeSandbox(noBwrap);
  const { sandbox, shell } = shellWith({ mode: 'on', network: 'none' }, probe);
  assert.equal(sandbox.state.kind, 'refused');
  assert.equal(shell.sandboxed, false);
  assert.match(sandboxNotice({ mode: 'on', network: 'none' }, sandbox.state)?.message ?? '', /sandbox: on, but no sandbox can be made \(bubblewrap is not installed/);
  await withTempDir(async (dir) => {
    const result = await executeTool(shell, { command: 'echo ran > out.txt' }, makeToolContext(dir));
    assert.equal(result.isError, true);
    assert.match(result.content, /refused: sandbox is on, but no sandbox can be made here \(bubblewrap is not installed.*nothing was run/);
    assert.equal(existsSync(join(dir, 'out.txt')), false);
  });
});

test('off: no probe, no notice, shell runs as before', async () => {
  const { sandbox, shell } = shellWith({ mode: 'off', network: 'none' }, undefined);
  assert.equal(sandbox.state.kind, 'unsandboxed');
  assert.equal(sandboxNotice({ mode: 'off', network: 'none' }, sandbox.state), undefined);
  assert.equal(shell.sandboxed, false);
});

test('composeSandbox: auto says once why it cannot sandbox; off never probes', async () => {
  const ruleSet = createRuleSet([], 'ask', []);
  const auto = await composeSandbox({ config: configSchema.parse({}), ruleSet, env: {}, home: '/nonexistent-home', probeDeps: noBwrap });
  assert.match(auto.notice ?? '', /shell commands run WITHOUT a sandbox: bubblewrap is not installed .*sandbox: auto/);
  let probed = false;
  const off = await composeSandbox({
    config: configSchema.parse({ sandbox: 'off' }), ruleSet, env: {}, home: '/nonexistent-home',
    probeDeps: { ...noBwrap, isExecutable: () => { probed = true; return false; } },
  });
  assert.equal(off.notice, undefined);
  assert.equal(probed, false);
  assert.equal(off.sandbox.state.kind, 'unsandboxed');
});
