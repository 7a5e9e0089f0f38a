import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EVERYTHING_BIN } from '../helpers/mcp-servers';
import { grantTools, hasTmux, initWorkspace, legionTui, startTmux, withWorkspace } from './modals-support';

async function waitUntil(check: () => Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms; // a safety net: the server is ready within seconds
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const skip = hasTmux() ? false : 'tmux is not installed';

/** ur-agent calls the real server-everything's `echo` (docs/mcp.md), then answers on its result. */
const SCRIPT = `
version: 1
replies:
  - agent: ur-agent
    first: true
    text: "Calling echo."
    toolCalls:
      - name: mcp__everything__echo
        input: { message: "hello from the tui" }
  - { agent: ur-agent, on: tool-result, repeat: true, text: "The server echoed it." }
  - { agent: ur-agent, on: tool-error, repeat: true, text: "The call failed." }
`;

test('the built TUI with server-everything (stdio) configured: the call asks, the approval shows server, tool and annotations; approved, the result row shows', { skip, timeout: 120_000 }, async () => {
  await withWorkspace(async (dir) => {
    const ws = join(dir, 'ws');
    const home = join(dir, 'home');
    await mkdir(ws);
    await mkdir(join(home, '.config', 'legion'), { recursive: true });
    await initWorkspace(ws, [], home);
    // A server of the user's own config starts without a trust step (a workspace one would not).
    await writeFile(join(home, '.config', 'legion', 'config.yaml'), `mcpServers:\n  everything:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(EVERYTHING_BIN)}, stdio]\n`);
    await grantTools(ws, 'ur-agent', ['mcp__everything__echo']);
    const script = join(dir, 'script.yaml');
    await writeFile(script, SCRIPT);
    const { command, env } = legionTui(ws, script);
    const t = startTmux(command, { ...env, HOME: home, XDG_CONFIG_HOME: join(home, '.config') });
    try {
      await t.waitFor(/message ur-agent/);
      // Servers start after the first frame; the server's log says when it is ready.
      const log = join(ws, '.legion', 'logs', 'mcp-everything.log');
      await waitUntil(async () => /ready: \d+ tools/.test(await readFile(log, 'utf8').catch(() => '')), 'the server ready in its log');
      t.type('go');
      t.keys('Enter');
      // No rule for MCP tools: it asks; the queue opens with the request and its note.
      let s = await t.waitFor(/Approval queue · 1 waiting for you/, 60_000);
      assert.match(s, /mcp__everything__echo hello from the tui/);
      t.keys('Enter'); // details: the whole note, wrapped
      s = await t.waitFor(/Request 1 of 1/);
      const flat = s.split('\n').map((l) => l.replace(/^│ ?|\s*│$/g, '').trim()).join(' ');
      assert.match(flat, /MCP server "everything", tool "echo" \(read-only, idempotent.*hints from the server\)/, s);
      assert.match(s, /"message": "hello from the tui"/);
      t.type('y');
      s = await t.waitFor(/The server echoed it\./, 30_000);
      assert.match(s, /⚙ mcp__everything__echo hello from the tui ✓ Echo: hello from the tui/);
      assert.doesNotMatch(s, /Approval queue/);
      // The decision is the user's, on record like any other.
      const runs = join(ws, '.legion', 'runs');
      const [run] = await readdir(runs);
      const approvals = (await readFile(join(runs, run!, 'approvals.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      assert.ok(approvals.some((a) => JSON.stringify(a).includes('mcp__everything__echo')), JSON.stringify(approvals));
      assert.ok(approvals.some((a) => a.decision === 'approved' || a.decidedBy === 'user'), JSON.stringify(approvals));
    } finally {
      t.kill();
    }
  });
});
