import '../../../helpers/own-home';
import { test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createShellTool } from '../../../../src/tools/builtin/shell';
import { executeTool } from '../../../../src/tools/execute-tool';
import type { ShellSandbox } from '../../../../src/tools/sandbox/sandbox';
import type { ToolResult } from '../../../../src/tools/types';
import { loadHooks } from '../../../../src/conventions/hooks/load';
import { createHooksTrust } from '../../../../src/conventions/hooks/trust';
import { createHookEngine } from '../../../../src/conventions/hooks/engine';
import { createTrustStore } from '../../../../src/mcp/trust';
import { definitionFiles } from '../../../../src/mcp/trust-files';
import { trustedRunFiles } from '../../../../src/cli/trusted-run-files';
import { makeToolContext } from '../../../helpers/tool-context';
import { makeSandboxFixture, realProbe, realSandbox, type SandboxFixture } from '../../../helpers/sandbox-fixture';

// docs/sandbox.md#trusted-files: a trusted hook or MCP server runs unsandboxed; a sandboxed
// command (a concurrent agent's) must not rewrite what it runs, between the trust check and the
// run or while bash reads the script. Real bubblewrap; the marker file says what ran.
const probe = await realProbe();
const skip = probe.kind === 'available' ? false : `no sandbox on this machine: ${probe.reason}`;

let fx: SandboxFixture;
let marker: string;
let hooksFile: string;
let mcpFile: string;
beforeEach(async () => {
  fx = await makeSandboxFixture();
  marker = join(fx.outside, 'marker');
  hooksFile = join(fx.home, '.config', 'legion', 'hooks-trust.json');
  mcpFile = join(fx.home, '.config', 'legion', 'mcp-trust.json');
  mkdirSync(join(fx.ws, '.claude', 'hooks'), { recursive: true });
  writeFileSync(join(fx.ws, '.claude', 'hooks', 'check.sh'), `echo original >> ${marker}\n`);
  writeFileSync(join(fx.ws, '.claude', 'settings.json'), JSON.stringify({ hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: 'bash .claude/hooks/check.sh' }] }] } }));
  mkdirSync(join(fx.ws, 'tools'));
  writeFileSync(join(fx.ws, 'tools', 'mcp.js'), `require('fs').appendFileSync(${JSON.stringify(marker)}, 'original\\n');\n`);
  writeFileSync(join(fx.ws, '.mcp.json'), JSON.stringify({ mcpServers: { srv: { command: 'node', args: ['tools/mcp.js'] } } }));
});
afterEach(async () => {
  await fx?.cleanup();
});

const env = { PATH: process.env.PATH! };
const hookFiles = () => ({ trusted: [], workspace: [join(fx.ws, '.claude', 'settings.json')] });

async function trustHooks() {
  const hooks = (await loadHooks(hookFiles())).hooks;
  const trust = createHooksTrust({ file: hooksFile, workspaceRoot: fx.ws, env });
  await trust.trust(hooks);
  return { hooks, trust };
}

async function trustServer() {
  const files = await definitionFiles({ kind: 'stdio', command: 'node', args: ['tools/mcp.js'], env: {}, cwd: fx.ws }, fx.ws, env);
  assert.deepEqual(Object.keys(files), ['tools/mcp.js']);
  await createTrustStore(mcpFile).trust(fx.ws, 'srv', { fingerprint: 'f', files });
}

function sandboxWith(protect: boolean): ShellSandbox {
  const trustedFiles = protect ? trustedRunFiles({ workspaceRoot: fx.ws, mcpTrustFile: mcpFile, hooksTrustFile: hooksFile }) : () => [];
  return realSandbox(fx, probe, {}, undefined, { trustedFiles });
}

function run(sandbox: ShellSandbox, command: string): Promise<ToolResult> {
  return executeTool(createShellTool({ killGraceMs: 300, drainMs: 2_000, sandbox }), { command }, makeToolContext(fx.ws));
}

const PAYLOAD = `echo pwned >> ${'$'}{MARK}`;

async function assertBlocked(sandbox: ShellSandbox, command: string): Promise<void> {
  const result = await run(sandbox, `MARK=${marker}; ${command}`);
  assert.equal(result.isError, true, `must fail: ${command}\n${result.content}`);
  assert.match(result.content, /blocked by the sandbox/, command);
}

test('a trusted hook script cannot be rewritten, appended to or swapped from the sandbox; the hook then runs the original', { skip }, async () => {
  const { hooks, trust } = await trustHooks();
  const sandbox = sandboxWith(true);
  try {
    await assertBlocked(sandbox, `echo '${PAYLOAD}' > .claude/hooks/check.sh`);
    await assertBlocked(sandbox, `echo '${PAYLOAD}' >> .claude/hooks/check.sh`);
    await assertBlocked(sandbox, `rm -f .claude/hooks/check.sh && echo '${PAYLOAD}' > .claude/hooks/check.sh`);
    await assertBlocked(sandbox, `mv .claude/hooks .claude/old && mkdir .claude/hooks && echo '${PAYLOAD}' > .claude/hooks/check.sh`);
    await assertBlocked(sandbox, `mv .claude .claude-old && mkdir -p .claude/hooks && echo '${PAYLOAD}' > .claude/hooks/check.sh`);
    await assertBlocked(sandbox, `echo '{}' > .claude/settings.json`);
    // Ordinary work next to them still writes.
    const ok = await run(sandbox, 'echo notes > .claude/notes.md && mkdir -p .claude/hooks/new && echo x > src.txt && cat .claude/hooks/check.sh');
    assert.ok(!ok.isError, ok.content);
    assert.match(ok.content, /echo original/);
    // A bash hook running while the sandbox tries to append: the concurrent call is refused too.
    const engine = createHookEngine({ hooks, root: fx.ws, runId: 'r', transcriptPath: () => '', env, trust, notice: () => undefined });
    const call = { sessionId: 's', participantId: 'a', initiatorId: 'user', chain: ['user', 'a'], toolName: 'file_write', toolUseId: 't', input: { path: 'a', content: '' } };
    const verdict = { decision: 'allow' as const, ruleId: 'x', reason: 'x', source: 'rule' as const };
    const [, appended] = await Promise.all([
      engine.preToolUse(call, verdict, new AbortController().signal),
      run(sandbox, `MARK=${marker}; echo '${PAYLOAD}' >> .claude/hooks/check.sh`),
    ]);
    assert.equal(appended.isError, true);
    assert.equal(readFileSync(marker, 'utf8'), 'original\n', 'the hook ran the trusted content only');
  } finally {
    sandbox.dispose();
  }
});

test('a trusted hook\'s program found on a PATH folder inside the workspace (an activated .venv/bin) is pinned: the sandbox cannot rewrite it', { skip }, async () => {
  mkdirSync(join(fx.ws, '.venv', 'bin'), { recursive: true });
  const program = join(fx.ws, '.venv', 'bin', 'lint-check');
  writeFileSync(program, `#!/bin/sh\necho original >> ${marker}\n`);
  execFileSync('chmod', ['+x', program]);
  writeFileSync(join(fx.ws, '.claude', 'settings.json'), JSON.stringify({ hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: 'lint-check --all' }] }] } }));
  const venvEnv = { PATH: `${join(fx.ws, '.venv', 'bin')}:${process.env.PATH!}` };
  const hooks = (await loadHooks(hookFiles())).hooks;
  const trust = createHooksTrust({ file: hooksFile, workspaceRoot: fx.ws, env: venvEnv });
  await trust.trust(hooks);
  const sandbox = sandboxWith(true);
  try {
    await assertBlocked(sandbox, `echo '${PAYLOAD}' > .venv/bin/lint-check`);
    await assertBlocked(sandbox, `rm -f .venv/bin/lint-check && printf '#!/bin/sh\\n${PAYLOAD}\\n' > .venv/bin/lint-check`);
    assert.equal(readFileSync(program, 'utf8'), `#!/bin/sh\necho original >> ${marker}\n`);
    // Rewritten from outside the sandbox, the hooks are no longer trusted.
    writeFileSync(program, `#!/bin/sh\necho changed >> ${marker}\n`);
    assert.equal((await trust.check(hooks)).trusted, false);
  } finally {
    sandbox.dispose();
  }
});

test('a trusted hook script reached through a symlink: neither its target nor the link can be replaced', { skip }, async () => {
  mkdirSync(join(fx.ws, 'scripts'));
  renameSync(join(fx.ws, '.claude', 'hooks', 'check.sh'), join(fx.ws, 'scripts', 'check.sh'));
  symlinkSync('../../scripts/check.sh', join(fx.ws, '.claude', 'hooks', 'check.sh'));
  await trustHooks();
  const sandbox = sandboxWith(true);
  try {
    await assertBlocked(sandbox, `echo '${PAYLOAD}' >> scripts/check.sh`);
    await assertBlocked(sandbox, `rm .claude/hooks/check.sh && echo '${PAYLOAD}' > .claude/hooks/check.sh`);
    await assertBlocked(sandbox, `ln -sf ../../README.md .claude/hooks/check.sh`);
    const ok = await run(sandbox, 'echo y > scripts/other.sh && echo z > .claude/notes.md');
    assert.ok(!ok.isError, ok.content);
    assert.equal(readFileSync(join(fx.ws, '.claude', 'hooks', 'check.sh'), 'utf8'), `echo original >> ${marker}\n`);
  } finally {
    sandbox.dispose();
  }
});

test('the control: without the trusted files, the same sandboxed rewrite succeeds (what the mounts stop)', { skip }, async () => {
  await trustHooks();
  await trustServer();
  const sandbox = sandboxWith(false);
  try {
    const result = await run(sandbox, `MARK=${marker}; echo '${PAYLOAD}' >> .claude/hooks/check.sh && echo 'x' >> tools/mcp.js`);
    assert.ok(!result.isError, result.content);
    assert.match(readFileSync(join(fx.ws, '.claude', 'hooks', 'check.sh'), 'utf8'), /pwned/);
  } finally {
    sandbox.dispose();
  }
});

test('a trusted MCP server\'s script and .mcp.json cannot be rewritten from the sandbox; the server then runs the original', { skip }, async () => {
  await trustServer();
  const sandbox = sandboxWith(true);
  try {
    const evil = `require("fs").appendFileSync(process.env.MARK || "${marker}", "pwned\\n");`;
    await assertBlocked(sandbox, `echo '${evil}' > tools/mcp.js`);
    await assertBlocked(sandbox, `echo '${evil}' >> tools/mcp.js`);
    await assertBlocked(sandbox, `mv tools tools-old && mkdir tools && echo '${evil}' > tools/mcp.js`);
    await assertBlocked(sandbox, `echo '{"mcpServers":{}}' > .mcp.json`);
    // The hooks were never trusted: their files stay writable (no approval, nothing runs them).
    const ok = await run(sandbox, 'echo "# mine" >> .claude/hooks/check.sh && echo y > tools/other.js');
    assert.ok(!ok.isError, ok.content);
    execFileSync('node', ['tools/mcp.js'], { cwd: fx.ws });
    assert.equal(readFileSync(marker, 'utf8'), 'original\n');
  } finally {
    sandbox.dispose();
  }
});

test('an approval given during the run protects the next call (the list is read per call)', { skip }, async () => {
  const sandbox = sandboxWith(true);
  try {
    const before = await run(sandbox, 'echo "# edit" >> tools/mcp.js');
    assert.ok(!before.isError, before.content);
    await trustServer();
    await assertBlocked(sandbox, 'echo "# edit" >> tools/mcp.js');
  } finally {
    sandbox.dispose();
  }
});
