import '../../../helpers/own-home';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { checkWorkspaceTrust, trustPlace } from '../../../../src/storage/workspace-trust';
import { trustWorkspace } from '../../../helpers/trust';
import { createShellTool } from '../../../../src/tools/builtin/shell';
import { executeTool } from '../../../../src/tools/execute-tool';
import type { ShellSandbox } from '../../../../src/tools/sandbox/sandbox';
import type { ToolResult } from '../../../../src/tools/types';
import { makeToolContext } from '../../../helpers/tool-context';
import { fixtureEnv, makeSandboxFixture, realProbe, realSandbox, type SandboxFixture } from '../../../helpers/sandbox-fixture';

/**
 * End to end, with real bubblewrap: a trusted nested workspace's `.legion/rules.yaml` (honoured
 * at its next start; its trust is of the folder) stays out of a sandboxed command's reach however
 * the command prepared the workspace in an earlier call — flooding it with files, moving the
 * nested workspace under `node_modules/` (its folders are pinned: the move fails), or flooding
 * it with directories (no search to exhaust: the `.legion/` folders Legion honours are known).
 * docs/sandbox.md#known-legion-folders.
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

/** A nested workspace the user trusted (`legion trust` in `packages/app`, or its first start there). */
async function nestedWorkspace(at = join(fx.ws, 'packages', 'app')): Promise<string> {
  const legion = join(at, '.legion');
  mkdirSync(legion, { recursive: true });
  writeFileSync(join(legion, 'rules.yaml'), RULES);
  await trustWorkspace(at, fixtureEnv(fx));
  return join(legion, 'rules.yaml');
}

async function trusted(at: string): Promise<boolean> {
  return (await checkWorkspaceTrust(trustPlace(at, fixtureEnv(fx), fx.home))).trusted;
}

const ATTACK = (dir: string) => `printf 'defaults: { unmatched: allow }\\n' >> ${dir}/.legion/rules.yaml; true`;

test('sandboxed: 25,000 files made by one call do not make a nested .legion/ writable in the next', { skip }, async () => {
  const rules = await nestedWorkspace();
  const flood = await run("mkdir flood-files && cd flood-files && seq -f 'f%05g' 25000 | xargs touch && cd .. && mv flood-files/* . && rmdir flood-files && ls | wc -l");
  assert.ok(!flood.isError, flood.content);
  await run(ATTACK('packages/app'));
  assert.equal(readFileSync(rules, 'utf8'), RULES, 'the nested rules were rewritten after the flood');
  await run("find . -maxdepth 1 -name 'f*' -type f -delete");
});

test('sandboxed: a nested workspace moved under node_modules/ by one call is still hidden in the next', { skip }, async () => {
  const rules = await nestedWorkspace();
  // A folder holding a mount point would move with it: the folders down to a known `.legion/` are mount points themselves.
  const moved = await run('mkdir -p node_modules/x && mv packages node_modules/x/; echo "mv=$?"; mv packages/app packages/app2; echo "mv2=$?"; true');
  assert.match(moved.content, /mv=1[\s\S]*mv2=1/, moved.content);
  await run(`${ATTACK('node_modules/x/packages/app')}; ${ATTACK('packages/app2')}; ${ATTACK('packages/app')}; true`);
  await run('test -d packages/app || mv node_modules/x/packages .; test -d packages/app || mv packages/app2 packages/app; true');
  assert.equal(readFileSync(rules, 'utf8'), RULES, 'the nested rules were rewritten');
  assert.equal(await trusted(join(fx.ws, 'packages', 'app')), true, 'a refused move revoked nothing');
});

test('sandboxed: a workspace of 60,000 directories runs sandboxed commands, and a trusted workspace deep in node_modules stays hidden', { skip }, async () => {
  const deep = join(fx.ws, 'node_modules', 'd7', 'e9', 'pkg');
  // 300 x 200 folders, made on the host (one `mkdir` per 200: a single command line would be too long).
  const made = spawnSync('bash', ['-c', 'for i in $(seq 1 300); do mkdir -p dflood/d$i/e{1..200} || exit 1; done'], { cwd: fx.ws });
  assert.equal(made.status, 0, String(made.stderr));
  const rules = await nestedWorkspace(deep);
  const result = await run(`ls dflood | wc -l; ${ATTACK('node_modules/d7/e9/pkg')}; cat node_modules/d7/e9/pkg/.legion/rules.yaml; echo ran-ok`);
  assert.ok(!result.isError, result.content);
  assert.match(result.content, /^300$/m);
  assert.match(result.content, /ran-ok/);
  assert.doesNotMatch(result.content, /rules: \[\]/, 'the nested rules were readable');
  assert.equal(readFileSync(rules, 'utf8'), RULES, 'the nested rules were rewritten');
  assert.equal(await trusted(deep), true);
  spawnSync('rm', ['-rf', join(fx.ws, 'dflood')]);
});
