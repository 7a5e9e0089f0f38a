import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundlePath, ensureBundle } from '../helpers/bundle';
import { withTempDir } from '../helpers/tmp';

// The bash script of `legion completion bash`, sourced in a real bash: `_legion` fills
// COMPREPLY from the built CLI for commands, flags, flag values, agent ids and run ids.

async function setUp(dir: string): Promise<NodeJS.ProcessEnv> {
  const bin = join(dir, 'bin');
  await mkdir(bin);
  await writeFile(join(bin, 'legion'), `#!/bin/sh\nexec "${process.execPath}" "${bundlePath}" "$@"\n`, { mode: 0o755 });
  const env = { PATH: `${bin}:${process.env.PATH ?? ''}`, HOME: dir, LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: join(dir, 'script.yaml') };
  await writeFile(join(dir, 'script.yaml'), 'version: 1\nfallback: ok\nreplies: []\n');
  const ws = join(dir, 'ws');
  await mkdir(ws);
  for (const args of [['run', 'hello'], ['run', '--new', 'again']]) {
    const r = spawnSync('legion', args, { cwd: ws, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    assert.equal(r.status, 0, r.stderr);
  }
  return env;
}

/** COMPREPLY for the command line `words` (the last one is under the cursor). */
function bashComplete(dir: string, env: NodeJS.ProcessEnv, words: string[]): string[] {
  const array = words.map((w) => `'${w}'`).join(' ');
  const script = `source <(legion completion bash) && COMP_WORDS=(legion ${array}) && COMP_CWORD=${words.length} && _legion && printf '%s\\n' "\${COMPREPLY[@]}"`;
  const r = spawnSync('bash', ['--norc', '--noprofile', '-c', script], { cwd: join(dir, 'ws'), env, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.split('\n').filter(Boolean);
}

test('bash completes commands, flags, flag values, agent ids and run ids of the current workspace', async () => {
  ensureBundle({ e2e: true });
  await withTempDir(async (dir) => {
    const env = await setUp(dir);
    assert.deepEqual(bashComplete(dir, env, ['r']), ['run', 'runs', 'rules']);
    assert.ok(bashComplete(dir, env, ['']).includes('doctor'));
    assert.deepEqual(bashComplete(dir, env, ['run', '--ap']), ['--approve']);
    assert.deepEqual(bashComplete(dir, env, ['run', '--approve', '']), ['deny', 'all']);
    assert.deepEqual(bashComplete(dir, env, ['run', '--to', '']), ['resource-agent', 'ur-agent']);
    assert.deepEqual(bashComplete(dir, env, ['--provider', 'g']), ['gemini']);
    assert.deepEqual(bashComplete(dir, env, ['completion', '']), ['bash', 'zsh', 'fish']);
    assert.deepEqual(bashComplete(dir, env, ['rules', 'e']), ['explain']);
    const runs = bashComplete(dir, env, ['show', '']);
    assert.equal(runs.length, 2);
    assert.ok(runs.every((id) => /^\d{4}-\d{2}-\d{2}T/.test(id)), runs.join(','));
    assert.deepEqual(bashComplete(dir, env, ['run', '--run', runs[0]!.slice(0, -2)]), [runs[0]]);
    // --cwd names another workspace: its names are offered.
    assert.deepEqual(bashComplete(dir, env, ['--cwd', '..', 'show', '']), []);
    assert.deepEqual(bashComplete(dir, env, ['--cwd', '../ws', 'show', '']), runs);
  });
});

test('legion completion: the three scripts, each with its install line; an unknown shell is a usage error', async () => {
  ensureBundle({ e2e: true });
  const run = (...args: string[]) => spawnSync(process.execPath, [bundlePath, 'completion', ...args], { encoding: 'utf8' });
  assert.match(run('bash').stdout, /legion completion bash > ~\/\.local\/share\/bash-completion\/completions\/legion\n[\s\S]*complete -o default -F _legion legion\n$/);
  assert.match(run('zsh').stdout, /^#compdef legion\n[\s\S]*legion completion zsh > "\$\{fpath\[1\]\}\/_legion"/);
  assert.match(run('fish').stdout, /legion completion fish > ~\/\.config\/fish\/completions\/legion\.fish\ncomplete -c legion /);
  const bad = run('tcsh');
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /^legion: unknown shell "tcsh"; usage: legion completion bash\|zsh\|fish\n$/);
  for (const [shell, check] of [['zsh', ['-n']], ['fish', ['--no-execute']]] as const) {
    if (spawnSync(shell, ['--version']).status !== 0) continue; // not installed here
    // From a file: fish refuses a script on a pipe from spawnSync ("Unable to read input file").
    const file = join(tmpdir(), `legion-completion-${process.pid}.${shell}`);
    writeFileSync(file, run(shell).stdout);
    try {
      const syntax = spawnSync(shell, [...check, file], { encoding: 'utf8' });
      assert.equal(syntax.status, 0, `${shell}: ${syntax.stderr}`);
    } finally {
      rmSync(file, { force: true });
    }
  }
});
