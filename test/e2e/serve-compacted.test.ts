import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CLI, hasTmux, initWorkspace, legionTui, quitTui, startTmux, withWorkspace, type Tmux } from './modals-support';
import { until } from '../helpers/processes';

/**
 * Attaching after compactions (docs/serve.md#attaching): the server's snapshot carries every
 * session's context records, and a client checks them with the schema the session files are
 * read with (src/context/records.ts). A server whose session was evicted and summarized, then
 * a new `legion run` per turn (each one attaches anew), then a TUI attaching.
 */
const SCRIPT = `
version: 1
replies:
  - { agent: reader, purpose: compaction, repeat: true, text: "SUMMARY: the user had big.txt read again and again." }
  - { agent: reader, on: message, repeat: true, toolCalls: [{ name: file_read, input: { path: big.txt } }] }
  - { agent: reader, on: tool-result, repeat: true, text: "I read it." }
`;

function sessionRecords(dir: string): string[] {
  const runs = readdirSync(join(dir, '.legion', 'runs'));
  const file = join(dir, '.legion', 'runs', runs[0]!, 'sessions', 'session-user__reader__default.jsonl');
  return readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '')
    .map((l) => (JSON.parse(l) as { type?: string }).type).filter((t): t is string => t !== undefined);
}

test('a server whose session compacted, evicted and summarized: every `legion run` attaches and answers, and a TUI attaches and shows the lane', { skip: !hasTmux() && 'tmux is not installed', timeout: 240_000 }, async () => {
  await withWorkspace(async (dir) => {
    await initWorkspace(dir, [{ id: 'reader', tools: ['file_read'] }], dir);
    await writeFile(join(dir, 'big.txt'), `BEGIN-MARKER\n${'lorem ipsum dolor sit amet '.repeat(90)}\n`);
    await mkdir(join(dir, '.legion'), { recursive: true });
    await writeFile(join(dir, '.legion', 'config.yaml'), 'context:\n  defaultWindow: 4000\n  compactAt: 0.6\n  keepRecent: 0.3\n  evictToolResultsOver: 1000\n');
    const script = join(dir, 'script.yaml');
    await writeFile(script, SCRIPT);
    const { command, env } = legionTui(dir, script);
    const server = spawn(process.execPath, [CLI, '--cwd', dir, 'serve'], { env: { PATH: process.env.PATH, HOME: dir, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    server.stderr!.on('data', (d) => { log += d; });
    let tui: Tmux | undefined;
    try {
      await until(() => /serving run/.test(log), `the server: ${log}`, 60_000);
      const runEnv = { PATH: process.env.PATH, HOME: dir, ...env };
      // Each `legion run` is a new client: its snapshot carries the records written so far.
      let summarizedAt = -1;
      for (let turn = 0; turn < 30; turn++) {
        const r = spawnSync(process.execPath, [CLI, '--cwd', dir, 'run', '--attach', '--to', 'reader', `turn ${turn}: read big.txt ${'and more words '.repeat(20)}`], { env: runEnv, encoding: 'utf8' });
        assert.equal(r.status, 0, `turn ${turn}: ${r.stderr}`);
        assert.equal(r.stdout, 'I read it.\n');
        const kinds = sessionRecords(dir);
        // Two more turns after the first summary: clients attach to a compacted session.
        if (summarizedAt < 0 && kinds.includes('eviction') && kinds.includes('compaction')) summarizedAt = turn;
        if (summarizedAt >= 0 && turn >= summarizedAt + 2) break;
      }
      const kinds = sessionRecords(dir);
      assert.ok(kinds.includes('eviction') && kinds.includes('compaction'), `evicted and summarized: ${kinds.join(',')}`);

      tui = startTmux(command, { ...env, HOME: dir });
      await tui.waitFor(/^legion · run \S+ \(resumed\) · attached · /m, 30_000);
      await tui.waitFor(/user → reader · default/);
      assert.doesNotMatch(tui.screen(), /malformed/);
      await quitTui(tui);
    } finally {
      tui?.kill();
      server.kill('SIGTERM');
      await until(() => server.exitCode !== null, 'the server to stop', 30_000).catch(() => server.kill('SIGKILL'));
    }
  });
});
