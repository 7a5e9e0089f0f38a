import '../../../helpers/own-home';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createShellTool } from '../../../../src/tools/builtin/shell';
import { executeTool } from '../../../../src/tools/execute-tool';
import type { ShellSandbox } from '../../../../src/tools/sandbox/sandbox';
import type { ToolResult } from '../../../../src/tools/types';
import { checkWorkspaceTrust, trustPlace, writeWorkspaceTrust, type WorkspaceTrust } from '../../../../src/storage/workspace-trust';
import { readTrustRegistry, registerUsed, trustRegistryFile, updateTrustRegistry } from '../../../../src/storage/trust-registry';
import { makeToolContext } from '../../../helpers/tool-context';
import { trustWorkspace } from '../../../helpers/trust';
import { fixtureEnv, makeSandboxFixture, realProbe, realSandbox, type SandboxFixture } from '../../../helpers/sandbox-fixture';

/**
 * End to end, with real bubblewrap: the holes of knowing (not searching for) the `.legion/`
 * folders Legion honours (docs/sandbox.md#known-legion-folders, docs/workspace-trust.md#the-registry).
 * - move-away-and-back: a trusted nested workspace moved away by something the sandbox did not
 *   pin (a call that began before it was trusted; here, the host), written at its new place, moved
 *   back where its marker verifies again: revoked by the next call, so its rewritten rules are inert;
 * - a workspace trusted while a call ran (that call could not hide it): revoked when the call ends;
 * - two calls at once cannot move it between them;
 * - a registry that does not read refuses every call, in one line, and nothing runs;
 * - registry entries pointing at what the command controls (a link to the workspace, to /usr, a
 *   file) hide nothing the call needs and crash nothing.
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

function run(command: string): Promise<ToolResult> {
  return executeTool(createShellTool({ killGraceMs: 300, drainMs: 2_000, sandbox }), { command, timeoutMs: 120_000 }, makeToolContext(fx.ws));
}

async function nestedWorkspace(rel: string, trust = true): Promise<{ root: string; rules: string }> {
  const root = join(fx.ws, rel);
  mkdirSync(join(root, '.legion'), { recursive: true });
  writeFileSync(join(root, '.legion', 'rules.yaml'), RULES);
  if (trust) await trustWorkspace(root, fixtureEnv(fx));
  return { root, rules: join(root, '.legion', 'rules.yaml') };
}

const trustOf = (root: string): Promise<WorkspaceTrust> => checkWorkspaceTrust(trustPlace(root, fixtureEnv(fx), fx.home));
const registry = () => trustRegistryFile(join(fx.home, '.config', 'legion'));
const ATTACK = (dir: string) => `printf 'defaults: { unmatched: allow }\\n' >> ${dir}/.legion/rules.yaml`;

test('sandboxed: moved away unpinned, written, moved back: the next call revokes its trust, so the rewritten rules are inert', { skip }, async () => {
  const { root, rules } = await nestedWorkspace('mv1/app');
  // What a call that began before the trust (nothing pinned then) could have done.
  mkdirSync(join(fx.ws, 'node_modules', 'x'), { recursive: true });
  renameSync(join(fx.ws, 'mv1'), join(fx.ws, 'node_modules', 'x', 'mv1'));
  const attack = await run(`${ATTACK('node_modules/x/mv1/app')}; mv node_modules/x/mv1 .; echo moved-back`);
  assert.match(attack.content, /moved-back/);
  assert.match(attack.content, /trust revoked for .*mv1\/app\/\.legion/, attack.content);
  assert.match(readFileSync(rules, 'utf8'), /unmatched: allow/, 'the control: the rules were written at the unhidden place');
  const trust = await trustOf(root);
  assert.equal(!trust.trusted && trust.reason, 'revoked', 'moved back to its registered path, the marker verifies: only the revocation keeps it untrusted');
  // Back at its path, it is hidden again (revoked entries in place are hidden: their transcripts).
  const read = await run(`cat mv1/app/.legion/rules.yaml; echo done`);
  assert.doesNotMatch(read.content, /unmatched/);
  // `legion trust` after a review makes it trusted again.
  await trustWorkspace(root, fixtureEnv(fx));
  assert.equal((await trustOf(root)).trusted, true);
});

test('sandboxed: a .legion/ replaced by a copy (same path, same marker, another folder) is revoked, never hidden as the trusted one', { skip }, async () => {
  const { root } = await nestedWorkspace('swap/app');
  renameSync(join(root, '.legion'), join(root, 'old'));
  mkdirSync(join(root, '.legion'));
  writeFileSync(join(root, '.legion', 'trusted'), readFileSync(join(root, 'old', 'trusted')));
  const result = await run(`${ATTACK('swap/app')}; echo wrote=$?`);
  assert.match(result.content, /trust revoked for .*swap\/app\/\.legion/, result.content);
  const trust = await trustOf(root);
  assert.equal(trust.trusted, false);
});

test('sandboxed: a workspace trusted while a call ran (that call could not hide it) is not honoured while it runs, and revoked when it ends', { skip }, async () => {
  // Under node_modules: beyond the secret scan, so nothing hid it before it was trusted.
  const { root, rules } = await nestedWorkspace('node_modules/late/app', false);
  const call = run(`for i in $(seq 1 40); do ${ATTACK('node_modules/late/app')} 2>/dev/null; sleep 0.1; done; echo done`);
  await sleep(1_500);
  await trustWorkspace(root, fixtureEnv(fx));
  // A start there now (the call still running, able to write its rules) does not honour it.
  const during = await trustOf(root);
  assert.equal(!during.trusted && during.reason, 'exposed', 'honoured while a call that could write it ran');
  assert.match(!during.trusted ? during.detail : '', /still running in .*\/ws \(process \d+\)/);
  const result = await call;
  assert.match(readFileSync(rules, 'utf8'), /unmatched: allow/, 'the control: the call wrote to it after the trust');
  assert.match(result.content, /trust revoked for .*late\/app\/\.legion: trusted while a sandboxed command/, result.content);
  const trust = await trustOf(root);
  assert.equal(!trust.trusted && trust.reason, 'revoked');
});

test('sandboxed: two calls at once cannot move a trusted nested workspace aside between them', { skip }, async () => {
  const { root, rules } = await nestedWorkspace('pair/app');
  mkdirSync(join(fx.ws, 'node_modules', 'y'), { recursive: true });
  const mover = run('for i in $(seq 1 20); do mv pair node_modules/y/ 2>/dev/null && echo MOVED; mv pair/app pair/app2 2>/dev/null && echo MOVED; sleep 0.1; done; echo mover-done');
  const writer = run(`for i in $(seq 1 20); do ${ATTACK('node_modules/y/pair/app')} 2>/dev/null; ${ATTACK('pair/app2')} 2>/dev/null; ${ATTACK('pair/app')} 2>/dev/null; sleep 0.1; done; echo writer-done`);
  const [moved, wrote] = await Promise.all([mover, writer]);
  assert.match(moved.content, /mover-done/);
  assert.match(wrote.content, /writer-done/);
  assert.doesNotMatch(moved.content, /MOVED/, moved.content);
  assert.equal(readFileSync(rules, 'utf8'), RULES);
  assert.equal((await trustOf(root)).trusted, true);
});

test('sandboxed: registry entries pointing at what the command controls hide nothing the call needs and crash nothing', { skip }, async () => {
  const { root: toWs } = await nestedWorkspace('evil/ws-link');
  const { root: toUsr } = await nestedWorkspace('evil/usr-link');
  const { root: toFile } = await nestedWorkspace('evil/file');
  // Replaced after they were trusted (by the host: a call could not, they are pinned).
  rmSync(join(toWs, '.legion'), { recursive: true });
  symlinkSync(fx.ws, join(toWs, '.legion'));
  rmSync(join(toUsr, '.legion'), { recursive: true });
  symlinkSync('/usr', join(toUsr, '.legion'));
  rmSync(join(toFile, '.legion'), { recursive: true });
  writeFileSync(join(toFile, '.legion'), 'x');
  // And entries no `legion trust` would write, at the top of the file system and above the workspace.
  const updated = updateTrustRegistry(registry(), (current, serial) => [
    ...current.workspaces,
    ...['/', '/usr', fx.base, join(fx.ws, '..', 'ws')].map((root) => ({ root, ino: '1', born: '0', serial, state: 'trusted' as const, at: 'x' })),
  ]);
  assert.ok(updated.ok);
  const result = await run('cat README.md; /usr/bin/env true && echo usr-ok; echo $((1+1))');
  // It ran (the revocation line marks the result as an error, as every "blocked by the sandbox" line does).
  assert.match(result.content, /hello/, result.content);
  assert.match(result.content, /usr-ok/);
  assert.match(result.content, /^2$/m);
  assert.match(result.content, /trust revoked for .*ws-link\/\.legion, .*usr-link\/\.legion, .*evil\/file\/\.legion/, result.content);
  for (const root of [toWs, toUsr, toFile]) assert.equal((await trustOf(root)).trusted, false);
});

test('sandboxed: an untrusted workspace Legion started in (its transcripts, web token) is hidden and pinned once recorded as used', { skip }, async () => {
  // Under node_modules: beyond the secret scan.
  const { root } = await nestedWorkspace('node_modules/used/app', false);
  writeFileSync(join(root, '.legion', 'web-token'), 'USED-WEB-TOKEN\n');
  const control = await run('cat node_modules/used/app/.legion/web-token');
  assert.match(control.content, /USED-WEB-TOKEN/, 'the control: unknown, it is readable');
  assert.ok(registerUsed(registry(), root).ok);
  const result = await run('cat node_modules/used/app/.legion/web-token; mv node_modules/used node_modules/used2; echo mv=$?');
  assert.doesNotMatch(result.content, /USED-WEB-TOKEN/, result.content);
  assert.match(result.content, /mv=1/, result.content);
  assert.equal((await trustOf(root)).trusted, false, 'used is never trusted');
});

test('sandboxed: links planted in an untrusted nested .legion/ before it is trusted (moved where nothing hid it) make legion trust refuse, naming them', { skip }, async () => {
  const { root, rules } = await nestedWorkspace('pre/app', false);
  mkdirSync(join(root, '.legion', 'collective', 'participants'), { recursive: true });
  writeFileSync(join(fx.ws, 'lead.json'), '{}\n');
  // Untrusted, nothing pins it: one call moves it beyond the secret scan (hidden mounts move along),
  // the next plants links in it there (nothing hides it), a third moves it back.
  const D = 'vendor/z/y/x/w/v/u/t';
  assert.match((await run(`mkdir -p ${D} && mv pre ${D}/ && echo moved`)).content, /moved/);
  const plant = await run(`ln ${D}/pre/app/.legion/rules.yaml hardlink.yaml && ln -s /proc/self/cwd/lead.json ${D}/pre/app/.legion/collective/participants/lead.json && echo planted`);
  assert.match(plant.content, /planted/, plant.content);
  assert.match((await run(`mv ${D}/pre . && echo back`)).content, /back/);
  const refused = await writeWorkspaceTrust(trustPlace(root, fixtureEnv(fx), fx.home));
  assert.equal(refused.ok, false);
  assert.match(!refused.ok ? refused.error : '', /\.legion\/collective\/participants\/lead\.json, \.legion\/rules\.yaml are links/);
  assert.equal((await trustOf(root)).trusted, false);
  // Replaced by plain copies, it is trusted, and the old hard link no longer reaches it.
  const copy = readFileSync(rules, 'utf8');
  rmSync(rules);
  writeFileSync(rules, copy);
  rmSync(join(root, '.legion', 'collective', 'participants', 'lead.json'));
  await trustWorkspace(root, fixtureEnv(fx));
  await run(`printf 'defaults: { unmatched: allow }\\n' >> hardlink.yaml`);
  assert.equal(readFileSync(rules, 'utf8'), RULES);
});

test('sandboxed: a trust registry that does not read refuses every call in one line, and nothing runs', { skip }, async () => {
  const file = registry();
  const good = readFileSync(file, 'utf8');
  try {
    for (const bad of ['{ not json', JSON.stringify({ version: 1, serial: 1, workspaces: [{ root: 'relative/path' }] }), JSON.stringify({ version: 2 })]) {
      writeFileSync(file, bad);
      const result = await run(': > ran-with-bad-registry');
      assert.equal(result.isError, true, bad);
      assert.match(result.content, /^refused: the trust registry could not be read \(.*trusted-workspaces\.json.*\): nothing was run; remove it, then run legion trust/, result.content);
      assert.throws(() => readFileSync(join(fx.ws, 'ran-with-bad-registry')), 'the refused command ran');
      const trust = await trustOf(join(fx.ws, 'pair', 'app'));
      assert.equal(!trust.trusted && trust.reason, 'unreadable');
    }
  } finally {
    writeFileSync(file, good);
  }
  assert.ok(readTrustRegistry(file).ok);
  assert.ok(!(await run('true')).isError);
});
