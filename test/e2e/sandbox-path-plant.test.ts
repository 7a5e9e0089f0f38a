import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../helpers/tmp';
import { realProbe } from '../helpers/sandbox-fixture';
import { CLI, initWorkspace } from './modals-support';
import type { LegionEvent } from '../../src/events/types';

/**
 * A sandboxed command must not plant a program Legion itself runs later, outside the sandbox
 * (docs/sandbox.md#environment). The user started Legion with a folder of the workspace on PATH
 * (an activated `.venv/bin`, `node_modules/.bin` from `npx legion`, direnv's `PATH_add bin`): an
 * approved, sandboxed shell call writes `git` and `bwrap` there, each a script that leaves a
 * mark outside the workspace (where the sandbox cannot write) and then runs the real program.
 * Legion's next checkpoint runs git, and its next start looks for bubblewrap: neither may be
 * the planted one. The built CLI, a faux agent, real bubblewrap.
 */
const probe = await realProbe();
const skip = probe.kind === 'available' ? false : `no sandbox on this machine: ${probe.reason}`;

const which = (name: string): string => execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();

interface Run { code: number | null; stdout: string; stderr: string }

function legion(args: string[], ws: string, env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, '--cwd', ws, ...args], { cwd: ws, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const deadline = setTimeout(() => child.kill('SIGKILL'), 90_000);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    child.on('exit', (code) => {
      clearTimeout(deadline);
      resolve({ code, stdout, stderr });
    });
  });
}

const eventsOf = (run: Run): LegionEvent[] => run.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as LegionEvent);

test('a program planted by a sandboxed call in a workspace folder on PATH is not run by Legion: not git for a checkpoint, not bwrap at the next start', { skip, timeout: 240_000 }, async () => {
  await withTempDir(async (dir) => {
    const home = join(dir, 'home');
    const ws = join(dir, 'ws');
    const bin = join(ws, '.venv', 'bin');
    await mkdir(home, { recursive: true });
    await mkdir(bin, { recursive: true });
    execFileSync('git', ['init', '-q', ws]);
    await initWorkspace(ws, [{ id: 'builder', tools: ['shell', 'file_write'] }], home);
    const plant = (name: string) => {
      const mark = join(dir, `ran-planted-${name}`);
      return `printf '#!/bin/sh\\ntouch ${mark}\\nexec ${which(name)} "$@"\\n' > .venv/bin/${name} && chmod +x .venv/bin/${name}`;
    };
    const first = join(dir, 'first.json');
    await writeFile(first, JSON.stringify({
      version: 1,
      replies: [
        { agent: 'builder', on: 'message', toolCalls: [{ name: 'shell', input: { command: `${plant('git')} && ${plant('bwrap')} && ls .venv/bin` } }] },
        { agent: 'builder', on: 'tool-result', toolCalls: [{ name: 'file_write', input: { path: 'notes.txt', content: 'after the plant\n' } }] },
        { agent: 'builder', on: 'tool-result', repeat: true, text: 'builder done' },
        { agent: 'builder', on: 'tool-error', repeat: true, text: 'builder failed' },
      ],
    }));
    const second = join(dir, 'second.json');
    await writeFile(second, JSON.stringify({
      version: 1,
      replies: [
        { agent: 'builder', on: 'message', toolCalls: [{ name: 'shell', input: { command: 'echo next start' } }] },
        { agent: 'builder', on: 'tool-result', repeat: true, text: 'builder done' },
        { agent: 'builder', on: 'tool-error', repeat: true, text: 'builder failed' },
      ],
    }));
    const env = (script: string): Record<string, string> => ({
      PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: home, XDG_CONFIG_HOME: join(home, '.config'),
      LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: script, ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '',
    });

    const run1 = await legion(['run', '--to', 'builder', '--json', '--approve', 'all', 'go'], ws, env(first));
    assert.equal(run1.code, 0, run1.stderr);
    const request = eventsOf(run1).find((e) => e.type === 'approval-request');
    assert.equal(request?.type === 'approval-request' && request.sandboxed, true, 'the planting call was approved and ran sandboxed');
    assert.ok(existsSync(join(bin, 'git')) && existsSync(join(bin, 'bwrap')), `the sandboxed call planted both: ${run1.stdout}`);
    assert.ok(existsSync(join(ws, 'notes.txt')), 'the write after it ran (with its checkpoint)');
    assert.equal(existsSync(join(dir, 'ran-planted-git')), false, 'Legion ran the planted git outside the sandbox');

    const run2 = await legion(['run', '--to', 'builder', '--json', 'go'], ws, env(second));
    assert.equal(run2.code, 0, run2.stderr);
    const start = eventsOf(run2).find((e) => e.type === 'tool-call-start');
    assert.equal(start?.type === 'tool-call-start' && start.sandboxed, true, `the next start's shell call runs sandboxed: ${run2.stderr}`);
    assert.equal(existsSync(join(dir, 'ran-planted-bwrap')), false, 'Legion ran the planted bwrap (outside any sandbox)');
    assert.equal(existsSync(join(dir, 'ran-planted-git')), false, 'Legion ran the planted git outside the sandbox');
  });
});
