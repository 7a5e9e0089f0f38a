import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { cp, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../helpers/tmp';
import { bundlePath as BUNDLE, ensureBundle } from '../helpers/bundle';
import { startWebhookServer } from '../helpers/webhook-server';
import { hasTmux, shellCommand, startTmux, type TmuxSession } from '../helpers/tmux';
import { until } from '../helpers/processes';
import { COMMITTED_WEB_TOKEN, hostileRepo } from '../helpers/hostile-workspace';

/**
 * Workspace trust with the TUI attached to `legion serve` (docs/workspace-trust.md): the cloned
 * repository of test/helpers/hostile-workspace.ts (allow rules, an agent with
 * `approvalAuthority: '*'`, a saved allowance, `sandbox: off`, a notify webhook, a committed web
 * token). Served untrusted, the attached TUI shows the same one warning as a local one, every call
 * asks the user, nothing is written, the webhook hears nothing and the committed token opens
 * nothing. After `legion trust` and a restart of the server, all of it applies.
 */

const SCRIPT = `
version: 1
replies:
  - { agent: lead, on: message, when: "^go$", repeat: true, toolCalls: [{ name: communicator, input: { targetId: worker, message: "do it" } }] }
  - agent: worker
    on: message
    repeat: true
    toolCalls:
      - { name: shell, input: { command: "touch ruled.txt" } }
      - { name: file_write, input: { path: authority.txt, content: "approved by lead" } }
      - { name: file_write, input: { path: allowed/x.txt, content: "allowed by a saved allowance" } }
  - { agent: lead, on: tool-result, when: "apr-4", toolCalls: [{ name: resolve_approval, input: { requestId: apr-4, decision: approved, reason: "lead says yes" } }] }
  - { agent: worker, on: tool-result, repeat: true, text: "worker done" }
  - { agent: worker, on: tool-error, repeat: true, text: "worker done" }
  - { agent: lead, on: tool-result, repeat: true, text: "lead done" }
  - { agent: lead, on: tool-error, repeat: true, text: "lead done" }
  - { agent: lead, on: message, repeat: true, text: "all done" }
`;

interface Served { child: ChildProcess; log(): string; base: string; token: string }

async function serve(clone: string, env: NodeJS.ProcessEnv): Promise<Served> {
  const child = spawn(process.execPath, [BUNDLE, 'serve', '--web', '127.0.0.1:0'], { cwd: clone, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr!.on('data', (d: Buffer) => { log += d.toString(); });
  await until(() => /serving run/.test(log) && /web page: http/.test(log), `the server: ${log}`, 60_000);
  const [, base, token] = /web page: (http:\/\/127\.0\.0\.1:\d+)\/\?token=([A-Za-z0-9_-]+)/.exec(log)!;
  return { child, log: () => log, base: base!, token: token! };
}

async function stop(served: Served): Promise<void> {
  if (served.child.exitCode !== null) return;
  const exited = new Promise((r) => served.child.once('exit', r));
  served.child.kill('SIGTERM');
  await exited;
}

/** `legion run --attach --to lead go`: the turn runs on the server; its approvals wait in the server's queue. */
function runAttached(clone: string, env: NodeJS.ProcessEnv): { child: ChildProcess; done: Promise<{ code: number | null; out: string }> } {
  const child = spawn(process.execPath, [BUNDLE, 'run', '--attach', '--to', 'lead', 'go'], { cwd: clone, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { out += d.toString(); });
  const exited = new Promise<{ code: number | null; out: string }>((r) => child.once('exit', (code) => r({ code, out })));
  // A run that never ends fails with what it printed (a generous bound on a loaded machine).
  const deadline = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`legion run did not end: ${out}`)), 60_000).unref());
  return { child, done: Promise.race([exited, deadline]) };
}

/** Every approval request of the workspace's runs: [tool, path or command, approver]. */
function requests(clone: string): string[][] {
  const runs = join(clone, '.legion', 'runs');
  const out: string[][] = [];
  for (const run of readdirSync(runs)) {
    const file = join(runs, run, 'approvals.jsonl');
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line.startsWith('{')) continue;
      const r = JSON.parse(line) as { kind: string; toolName: string; input: { path?: string; command?: string }; approverId: string };
      if (r.kind === 'request') out.push([r.toolName, r.input.path ?? r.input.command ?? '', r.approverId]);
    }
  }
  return out;
}

const webStatus = async (served: Served, token: string): Promise<number> => (await fetch(`${served.base}/api/state`, { headers: { 'x-legion-token': token } })).status;
const warnings = (text: string): number => text.match(/untrusted workspace, run legion trust/g)?.length ?? 0;

function attachTui(clone: string, env: NodeJS.ProcessEnv): TmuxSession {
  return startTmux({ command: shellCommand([process.execPath, BUNDLE, '--cwd', clone]), cwd: clone, env, width: 200, height: 44 });
}

test('attached to legion serve: an untrusted clone\'s .legion/ grants nothing and the TUI says so once; after legion trust and a restart, everything applies', { skip: !hasTmux() && 'tmux is not installed', timeout: 240_000 }, async () => {
  ensureBundle({ e2e: true });
  const hook = await startWebhookServer();
  const servers: Served[] = [];
  const tuis: TmuxSession[] = [];
  const runs: ChildProcess[] = [];
  try {
    await withTempDir(async (dir) => {
      const repo = await hostileRepo(dir, hook.url, SCRIPT);
      const home = join(dir, 'victim');
      await mkdir(home);
      const clone = join(home, 'clone');
      await cp(repo, clone, { recursive: true });
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: '', LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: join(clone, 'script.yaml'),
        ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '', TERM: 'xterm-256color', NO_COLOR: '1',
      };

      // 1. Served untrusted.
      const first = await serve(clone, env);
      servers.push(first);
      assert.equal(warnings(first.log()), 1, first.log());
      assert.notEqual(first.token, COMMITTED_WEB_TOKEN, 'a new web token, not the committed one');
      assert.equal(await webStatus(first, COMMITTED_WEB_TOKEN), 401, 'the committed token opens nothing');
      assert.equal(await webStatus(first, first.token), 200);
      const tui = attachTui(clone, env);
      tuis.push(tui);
      let screen = await tui.waitFor((s) => /· attached ·/.test(s) && warnings(s) > 0, 30_000, 'the attached TUI with the warning');
      assert.equal(warnings(screen), 1, screen);
      const untrusted = runAttached(clone, env);
      runs.push(untrusted.child);
      await tui.waitFor(/3 approvals pending/, 60_000, 'the three calls asking the user');
      assert.deepEqual(requests(clone), [['shell', 'touch ruled.txt', 'user'], ['file_write', 'authority.txt', 'user'], ['file_write', 'allowed/x.txt', 'user']],
        'no allow rule, no agent approver, no allowance: every call asks the user');
      tui.keys('C-y');
      await tui.waitFor(/Approval queue · 3 waiting for you/, 30_000);
      tui.type('N');
      await tui.waitFor(/Reject 3 requests/, 30_000);
      tui.keys('Enter');
      await tui.waitFor(/rejected 3 requests/, 30_000, 'all three rejected');
      const ended = await untrusted.done;
      assert.equal(ended.code, 0, ended.out);
      assert.equal(warnings(ended.out), 1, `legion run attached prints the warning once: ${ended.out}`);
      for (const f of ['ruled.txt', 'authority.txt', join('allowed', 'x.txt')]) assert.equal(existsSync(join(clone, f)), false, f);
      tui.kill();
      await stop(first);
      assert.equal(hook.received.length, 0, 'the committed notify webhook heard nothing');

      // 2. Trusted, then served again: the same workspace's grants apply.
      const trusted = spawnSync(process.execPath, [BUNDLE, 'trust'], { cwd: clone, env, encoding: 'utf8', timeout: 60_000 });
      assert.equal(trusted.status, 0, trusted.stderr);
      const second = await serve(clone, env);
      servers.push(second);
      assert.equal(warnings(second.log()), 0, second.log());
      assert.equal(second.token, first.token, 'the token made at the untrusted start replaced the committed one for good; trusted, it is kept');
      assert.equal(await webStatus(second, COMMITTED_WEB_TOKEN), 401);
      const again = attachTui(clone, env);
      tuis.push(again);
      screen = await again.waitFor(/· attached ·/, 30_000, 'the attached TUI');
      const honoured = runAttached(clone, env);
      runs.push(honoured.child);
      const done = await honoured.done;
      assert.equal(done.code, 0, done.out);
      assert.equal(warnings(done.out), 0, done.out);
      assert.ok(existsSync(join(clone, 'ruled.txt')), 'the project allow rule let the shell call run');
      assert.ok(existsSync(join(clone, 'authority.txt')), 'the lead approved');
      assert.ok(existsSync(join(clone, 'allowed', 'x.txt')), 'the saved allowance was honoured');
      assert.deepEqual(requests(clone).slice(3), [['file_write', 'authority.txt', 'lead']]);
      await until(() => hook.received.length > 0, 'the notify webhook of the trusted config', 30_000);
      screen = again.capture();
      assert.equal(warnings(screen), 0, screen);
    });
  } finally {
    for (const t of tuis) t.kill();
    for (const r of runs) if (r.exitCode === null) r.kill('SIGKILL');
    for (const s of servers) await stop(s);
    await hook.close();
  }
});
