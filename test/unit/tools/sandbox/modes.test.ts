import '../../../helpers/own-home';
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
  const sandbox = createShellSandbox({ settings, ...(probe ? { probe } : {}), home: '/nonexistent-home', secretPatterns: DEFAULT_SECRET_PATTERNS, tempDir: tmpdir(), trustedFiles: () => [], env: { HOME: '/nonexistent-home' }, trustRegistry: '/nonexistent-home/.config/legion/trusted-workspaces.json' });
  return { sandbox, shell: createShellTool({ sandbox, killGraceMs: 200, drainMs: 2_000 }) };
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
  const auto = composeSandbox({ config: configSchema().parse({}), ruleSet, env: {}, home: '/nonexistent-home', workspaceRoot: '/nonexistent-ws', trustedFiles: () => [], probeDeps: noBwrap });
  assert.equal(auto.state.kind, 'pending');
  assert.match((await auto.start())?.message ?? '', /shell commands run WITHOUT a sandbox: bubblewrap is not installed .*sandbox: auto/);
  assert.equal(auto.state.kind, 'unsandboxed');
  let probed = false;
  const off = composeSandbox({
    config: configSchema().parse({ sandbox: 'off' }), ruleSet, env: {}, home: '/nonexistent-home', workspaceRoot: '/nonexistent-ws', trustedFiles: () => [],
    probeDeps: { ...noBwrap, isExecutable: () => { probed = true; return false; } },
  });
  assert.equal(off.state.kind, 'unsandboxed');
  assert.equal(await off.start(), undefined);
  assert.equal(probed, false);
});

/** Probe deps whose trial run waits until `release()`: bubblewrap "found", answering late. */
function slowProbe(answer: { code: number; output: string }) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => { release = resolve; });
  let runs = 0;
  const deps: ProbeDeps = {
    platform: 'linux', path: '/opt/fake', isExecutable: (file) => file === '/opt/fake/bwrap',
    run: async () => {
      runs++;
      await gate;
      return answer;
    },
  };
  return { deps, release, runs: () => runs };
}

test('a shell call made while the probe is still running waits for it, and never runs unconfined when the sandbox is on', async () => {
  const ruleSet = createRuleSet([], 'ask', []);
  const slow = slowProbe({ code: 1, output: 'bwrap: No permissions to creating new namespace\n' });
  const sandbox = composeSandbox({ config: configSchema().parse({ sandbox: 'on' }), ruleSet, env: {}, home: '/nonexistent-home', workspaceRoot: '/nonexistent-ws', trustedFiles: () => [], probeDeps: slow.deps });
  const shell = createShellTool({ sandbox, killGraceMs: 200, drainMs: 2_000 });
  assert.equal(slow.runs(), 0, 'composing does not probe');
  assert.equal(sandbox.launch('true', '/').ok, false, 'no launch while pending');
  assert.equal(shell.sandboxed, false, 'never claimed sandboxed before the probe says so');
  await withTempDir(async (dir) => {
    let settled = false;
    const call = executeTool(shell, { command: 'echo ran > out.txt' }, makeToolContext(dir)).finally(() => { settled = true; });
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(settled, false, 'the call waits for the probe');
    assert.equal(slow.runs(), 1, 'the call started the probe');
    assert.equal(existsSync(join(dir, 'out.txt')), false);
    slow.release();
    const result = await call;
    assert.equal(result.isError, true);
    assert.match(result.content, /refused: sandbox is on, but no sandbox can be made here \(user namespaces are disabled/);
    assert.equal(existsSync(join(dir, 'out.txt')), false);
    assert.equal(sandbox.state.kind, 'refused');
    assert.equal(slow.runs(), 1, 'probed once');
  });
});
