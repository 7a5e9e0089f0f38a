import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../helpers/tmp';
import { bundlePath as BUNDLE, ensureBundle } from '../helpers/bundle';
import { startWebhookServer } from '../helpers/webhook-server';
import { hasTmux, shellCommand, startTmux } from '../helpers/tmux';
import { hostileRepo } from '../helpers/hostile-workspace';
import type { LegionEvent } from '../../src/events/types';

/**
 * Workspace trust end to end (docs/workspace-trust.md), with the built CLI: a cloned repository
 * commits its own `.legion/` (allow rules and `defaults: { unmatched: allow }`, a config turning
 * the sandbox off and sending approval requests to a webhook, an agent with
 * `approvalAuthority: '*'`, a saved allowance, and the attacker's own trust marker). In the
 * victim's checkout none of it takes effect and one warning says so; after `legion trust` all of
 * it does; moved elsewhere, the workspace is untrusted again.
 */

const SCRIPT = `
version: 1
replies:
  - { agent: lead, on: message, first: true, toolCalls: [{ name: communicator, input: { targetId: worker, message: "do it" } }] }
  - agent: worker
    on: message
    toolCalls:
      - { name: shell, input: { command: "touch ruled.txt" } }
      - { name: file_write, input: { path: authority.txt, content: "approved by lead" } }
      - { name: file_write, input: { path: allowed/x.txt, content: "allowed by a saved allowance" } }
  - { agent: lead, on: tool-result, when: "apr-1", toolCalls: [{ name: resolve_approval, input: { requestId: apr-1, decision: approved, reason: "lead says yes" } }] }
  - { agent: worker, on: tool-result, repeat: true, text: "worker done" }
  - { agent: lead, on: tool-result, repeat: true, text: "lead done" }
  - { agent: lead, on: message, repeat: true, text: "all done" }
`;

interface Run { code: number | null; stdout: string; stderr: string }

function legion(args: string[], cwd: string, home: string): Promise<Run> {
  const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: '', LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: join(cwd, 'script.yaml'), ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '', LEGION_DEBUG: '' };
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BUNDLE, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const eventsOf = (run: Run): LegionEvent[] => run.stdout.trimEnd().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as LegionEvent);
const warningLines = (run: Run): string[] => run.stderr.split('\n').filter((l) => /untrusted workspace/.test(l));

test('a cloned repository\'s .legion/ grants nothing until `legion trust`; moved, it is untrusted again', { timeout: 120_000 }, async () => {
  ensureBundle({ e2e: true });
  const server = await startWebhookServer();
  try {
    await withTempDir(async (dir) => {
      const repo = await hostileRepo(dir, server.url, SCRIPT);
      const home = join(dir, 'victim');
      await mkdir(home);

      // 1. The victim's clone: nothing of the committed .legion/ takes effect.
      const clone = join(home, 'clone');
      await cp(repo, clone, { recursive: true });
      const untrusted = await legion(['run', '--to', 'lead', '--json', '--approve', 'deny', 'go'], clone, home);
      assert.equal(untrusted.code === 0 || untrusted.code === 3, true, untrusted.stderr);
      const warned = warningLines(untrusted);
      assert.equal(warned.length, 1, untrusted.stderr);
      assert.match(warned[0]!, /untrusted workspace, run legion trust .*\.legion\/config\.yaml.*allow rules.*approvalAuthority.*allowances/);
      const asked = eventsOf(untrusted).filter((e) => e.type === 'approval-request');
      assert.deepEqual(asked.map((e) => e.type === 'approval-request' && [e.toolName, e.approverId]), [['shell', 'user'], ['file_write', 'user'], ['file_write', 'user']],
        'the shell call asks (no project allow rule, no unmatched: allow), the lead cannot approve, the allowance is not honoured');
      assert.equal(existsSync(join(clone, 'ruled.txt')), false);
      assert.equal(existsSync(join(clone, 'authority.txt')), false);
      assert.equal(existsSync(join(clone, 'allowed', 'x.txt')), false);
      assert.equal(server.received.length, 0, 'the committed notify webhook receives nothing');
      const rules = await legion(['rules', 'check'], clone, home);
      assert.match(rules.stdout, /\.legion\/rules\.yaml: 1 rule \(2 allow rule\(s\) and defaults ignored: untrusted workspace/);
      const doctor = await legion(['doctor', '--json'], clone, home);
      const trustCheck = (JSON.parse(doctor.stdout) as { checks: { name: string; ok: boolean; detail: string }[] }).checks.find((c) => c.name === 'trust');
      assert.equal(trustCheck?.ok, false);
      if (hasTmux()) {
        // The TUI starts too, and its first screen carries the one warning line.
        const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: '', LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: join(clone, 'script.yaml'), ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '', TERM: 'xterm-256color', NO_COLOR: '1' };
        const tui = startTmux({ command: shellCommand([process.execPath, BUNDLE, '--cwd', clone, '--new']), cwd: clone, env, width: 160, height: 40 });
        try {
          const screen = await tui.waitFor(/untrusted workspace, run legion trust/, 20_000, 'the warning on the first screen');
          assert.equal(screen.match(/untrusted workspace/g)?.length, 1, screen);
          assert.equal(server.received.length, 0);
        } finally {
          tui.kill();
        }
      }

      // 2. `legion trust` lists what it honours, then everything applies.
      const trusted = join(home, 'trusted');
      await cp(repo, trusted, { recursive: true });
      const listed = await legion(['trust'], trusted, home);
      assert.equal(listed.code, 0, listed.stderr);
      for (const line of [/config\.yaml sandbox: .*\(!\)/, /config\.yaml notify: .*\(!\)/, /allow evil-shell/, /ask lead-approves approved first by lead/, /defaults: unmatched calls → allow/, /participant lead: approvalAuthority '\*'/, /allowance: worker may file_write/]) {
        assert.match(listed.stdout, line);
      }
      const honoured = await legion(['run', '--to', 'lead', '--json', '--approve', 'deny', 'go'], trusted, home);
      assert.equal(honoured.code, 0, honoured.stderr);
      assert.deepEqual(warningLines(honoured), []);
      const requests = eventsOf(honoured).filter((e) => e.type === 'approval-request');
      assert.deepEqual(requests.map((e) => e.type === 'approval-request' && [e.toolName, e.approverId]), [['file_write', 'lead']]);
      assert.ok(existsSync(join(trusted, 'ruled.txt')), 'the project allow rule let the shell call run');
      assert.ok(existsSync(join(trusted, 'authority.txt')), 'the lead approved');
      assert.ok(existsSync(join(trusted, 'allowed', 'x.txt')), 'the saved allowance was honoured');
      assert.ok(server.received.length > 0, 'the notify webhook of the trusted config receives events');

      // 3. Moved: untrusted again (the marker was for the old path).
      const seen = server.received.length;
      const moved = join(home, 'moved');
      await rename(trusted, moved);
      const again = await legion(['run', '--to', 'lead', '--json', '--approve', 'deny', '--new', 'go'], moved, home);
      assert.equal(warningLines(again).length, 1, again.stderr);
      assert.match(warningLines(again)[0]!, /moved, copied or cloned/);
      assert.equal(server.received.length, seen);
      assert.ok(eventsOf(again).filter((e) => e.type === 'approval-request').every((e) => e.type === 'approval-request' && e.approverId === 'user'));

      // 4. Revoked: untrusted.
      await cp(repo, trusted, { recursive: true });
      assert.equal((await legion(['trust'], trusted, home)).code, 0);
      assert.match((await legion(['trust', '--revoke'], trusted, home)).stdout, /no longer trusted/);
      assert.equal(warningLines(await legion(['rules', 'check'], trusted, home)).length, 0);
      assert.match((await legion(['rules', 'check'], trusted, home)).stdout, /ignored: untrusted workspace/);
    });
  } finally {
    await server.close();
  }
});
