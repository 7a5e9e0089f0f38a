import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createShellTool } from '../../../../src/tools/builtin/shell';
import { executeTool } from '../../../../src/tools/execute-tool';
import type { ShellSandbox } from '../../../../src/tools/sandbox/sandbox';
import type { ToolResult } from '../../../../src/tools/types';
import { makeToolContext } from '../../../helpers/tool-context';
import { makeSandboxFixture, realProbe, realSandbox, type SandboxFixture } from '../../../helpers/sandbox-fixture';

/**
 * End to end, with real bubblewrap: a nested workspace's `.legion/rules.yaml` (honoured at its
 * next start; its trust is of the folder) stays out of a sandboxed command's reach however the
 * command prepared the workspace in an earlier call — flooding it with files, moving the nested
 * workspace under `node_modules/`, or flooding it with directories (then the call is refused,
 * saying why). docs/sandbox.md#what-is-protected-what-is-not.
 */
const probe = await realProbe();
const skip = probe.kind === 'available' ? false : `no sandbox on this machine: ${probe.reason}`;
const RULES = 'version: 1\nrules: []\n';

let fx: SandboxFixture;
let sandbox: ShellSandbox;
before(async () => {
  fx = await makeSandboxFixture();
  sandbox = realSandbox(fx, probe);
});
after(async () => {
  sandbox?.dispose();
  await fx?.cleanup();
});

function run(command: string, on: ShellSandbox = sandbox): Promise<ToolResult> {
  return executeTool(createShellTool({ killGraceMs: 300, drainMs: 2_000, sandbox: on }), { command, timeoutMs: 120_000 }, makeToolContext(fx.ws));
}

function nestedWorkspace(): string {
  const legion = join(fx.ws, 'packages', 'app', '.legion');
  mkdirSync(legion, { recursive: true });
  writeFileSync(join(legion, 'rules.yaml'), RULES);
  return join(legion, 'rules.yaml');
}

const ATTACK = (dir: string) => `printf 'defaults: { unmatched: allow }\\n' >> ${dir}/.legion/rules.yaml; true`;

test('sandboxed: 25,000 files made by one call do not make a nested .legion/ writable in the next', { skip }, async () => {
  const rules = nestedWorkspace();
  const flood = await run("mkdir flood-files && cd flood-files && seq -f 'f%05g' 25000 | xargs touch && cd .. && mv flood-files/* . && rmdir flood-files && ls | wc -l");
  assert.ok(!flood.isError, flood.content);
  await run(ATTACK('packages/app'));
  assert.equal(readFileSync(rules, 'utf8'), RULES, 'the nested rules were rewritten after the flood');
  await run("find . -maxdepth 1 -name 'f*' -type f -delete");
});

test('sandboxed: a nested workspace moved under node_modules/ by one call is still hidden in the next', { skip }, async () => {
  const rules = nestedWorkspace();
  // A folder holding a mount point moves with it: the rename is not refused.
  await run('mkdir -p node_modules/x && mv packages node_modules/x/; true');
  await run(`${ATTACK('node_modules/x/packages/app')}; ${ATTACK('packages/app')}; true`);
  await run('test -d packages || mv node_modules/x/packages .; true');
  assert.equal(readFileSync(rules, 'utf8'), RULES, 'the nested rules were rewritten');
});

test('sandboxed: more directories than the .legion/ search reads: the next call is refused, saying why, and nothing runs', { skip }, async () => {
  const small = realSandbox(fx, probe, {}, undefined, { scanLimits: { directories: 300 } });
  try {
    const flood = await run('mkdir -p dir-flood/d{1..400}', small);
    assert.ok(!flood.isError, flood.content);
    const next = await run(`: > ran-after-flood; ${ATTACK('packages/app')}`, small);
    assert.equal(next.isError, true);
    assert.match(next.content, /refused: workspace scan incomplete: more than 300 directories/);
    assert.throws(() => readFileSync(join(fx.ws, 'ran-after-flood')), 'the refused command ran');
  } finally {
    small.dispose();
  }
});
