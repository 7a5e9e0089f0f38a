import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bundlePath, cleanAppEnv, ensureBundle } from '../helpers/bundle';
import { makeTempDir } from '../helpers/tmp';
import { until } from '../helpers/processes';

// Workspace files are the agent's to write (a sandboxed command writes any of them). What the
// CLI prints of them (an MCP server's name, a hook's command) must not reach the user's terminal
// as control sequences: OSC 52 writes the clipboard (a later paste runs what the agent chose),
// the C1 forms (U+009D OSC, U+009B CSI) act the same on many terminals.
const OSC52 = '\x1b]52;c;ZWNobyBwd25lZA==\x07';
const C1 = '\x9d0;TITLE\x9c\x9b2A';

/** Control characters in `text` other than newline and tab. */
function controls(text: string): string[] {
  return [...text.matchAll(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/g)].map((m) => JSON.stringify(m[0]));
}

async function hostileWorkspace(dir: string): Promise<void> {
  await writeFile(join(dir, '.mcp.json'), JSON.stringify({ mcpServers: { [`srv${OSC52}${C1}`]: { command: 'node', args: ['s.js'] } } }));
  await mkdir(join(dir, '.claude'));
  const hook = { type: 'command', command: `echo ${OSC52}${C1}` };
  await writeFile(join(dir, '.claude', 'settings.json'), JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'shell', hooks: [hook] }] } }));
}

test('legion mcp list and legion hooks list print a hostile workspace without its control sequences', async () => {
  ensureBundle({ e2e: true });
  const ws = await makeTempDir('legion-controls-');
  try {
    await hostileWorkspace(ws.dir);
    for (const args of [['mcp', 'list'], ['hooks', 'list']]) {
      const r = spawnSync(process.execPath, [bundlePath, '--cwd', ws.dir, ...args], { encoding: 'utf8', env: cleanAppEnv({ HOME: ws.dir }) });
      assert.match(r.stdout + r.stderr, /srv52;c;ZWNobyBwd25lZA==|echo 52;c;/, `${args.join(' ')} shows the entry`);
      assert.deepEqual(controls(r.stdout), [], `legion ${args.join(' ')} stdout`);
      assert.deepEqual(controls(r.stderr), [], `legion ${args.join(' ')} stderr`);
    }
  } finally {
    await ws.cleanup();
  }
});

test('legion serve logs a hostile workspace\'s warnings without their control sequences', async () => {
  ensureBundle({ e2e: true });
  const ws = await makeTempDir('legion-controls-serve-');
  const child = spawn(process.execPath, [bundlePath, '--cwd', ws.dir, 'serve'], { env: cleanAppEnv({ HOME: ws.dir }), stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => { err += d; });
  const exited = new Promise((r) => child.once('exit', r));
  try {
    await hostileWorkspace(ws.dir);
    await until(() => /serving run/.test(err) || child.exitCode !== null, 'legion serve to start', 20_000);
    assert.match(err, /MCP server "srv52;c;/);
    assert.deepEqual(controls(err), []);
  } finally {
    child.kill('SIGTERM');
    await exited;
    await ws.cleanup();
  }
});
