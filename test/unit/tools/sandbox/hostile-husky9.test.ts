import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hookAttackScene, realProbe, hostGit } from '../../../helpers/sandbox-fixture';

const probe = await realProbe();
const skip = probe.kind === 'available' ? false : `no sandbox on this machine: ${probe.reason}`;

/**
 * husky 9 (what `npx husky init` sets up today) sets `core.hooksPath = .husky/_`; each hook there
 * is two lines that source `.husky/_/h`, which runs the project's own hook one folder up:
 * `.husky/pre-commit`. The sandbox guarded the hooksPath folder `.husky/_` only, so a sandboxed
 * command appended to `.husky/pre-commit` and the user's next `git commit` ran it on the host,
 * unsandboxed. A hooksPath folder named `_` is husky's: its parent, where the hooks it runs live,
 * is guarded too (in the sandbox and, through the same list, for the file tools).
 */
const git = hostGit;
const scene = hookAttackScene(probe, (fx) => {
  // What `husky` (v9) writes: .husky/_/h, one file per hook sourcing it, and core.hooksPath.
  mkdirSync(join(fx.ws, '.husky', '_'), { recursive: true });
  writeFileSync(join(fx.ws, '.husky', '_', 'h'), '#!/usr/bin/env sh\nn=$(basename "$0")\ns=$(dirname "$(dirname "$0")")/$n\n[ ! -f "$s" ] && exit 0\nsh -e "$s" "$@"\n', { mode: 0o755 });
  writeFileSync(join(fx.ws, '.husky', '_', 'pre-commit'), '#!/usr/bin/env sh\n. "$(dirname "$0")/h"\n', { mode: 0o755 });
  writeFileSync(join(fx.ws, '.husky', 'pre-commit'), 'exit 0\n');
  git(fx.ws, 'config', 'core.hooksPath', '.husky/_');
});

test('husky 9: the project\'s hooks one folder above core.hooksPath (.husky/pre-commit) are guarded like the hooksPath folder', () => {
  const guarded = scene.guarded();
  assert.ok(guarded.includes(join(scene.fx.ws, '.husky', '_')), guarded.join(', '));
  assert.ok(guarded.includes(join(scene.fx.ws, '.husky')), `husky's hooks folder guarded: ${guarded.join(', ')}`);
});

test('sandboxed: a command cannot make husky 9\'s .husky/pre-commit run its code at the user\'s next commit', { skip }, async () => {
  // The control: husky's chain does run .husky/pre-commit on this machine's git.
  writeFileSync(join(scene.fx.ws, '.husky', 'pre-commit'), `touch ${scene.pwned}.control\n`);
  git(scene.fx.ws, 'commit', '-q', '--allow-empty', '-m', 'control');
  assert.ok(existsSync(`${scene.pwned}.control`), 'husky 9\'s chain runs .husky/pre-commit');
  writeFileSync(join(scene.fx.ws, '.husky', 'pre-commit'), 'exit 0\n');

  const result = await scene.run(`printf 'touch ${scene.pwned}\\n' >> .husky/pre-commit; printf 'touch ${scene.pwned}\\n' > .husky/pre-push; true`);
  assert.match(result.content, /Read-only file system|blocked by the sandbox/, result.content);
  git(scene.fx.ws, 'commit', '-q', '--allow-empty', '-m', 'host commit');
  assert.equal(existsSync(scene.pwned), false, 'the user\'s commit ran what the sandboxed command wrote');
  assert.equal(readFileSync(join(scene.fx.ws, '.husky', 'pre-commit'), 'utf8'), 'exit 0\n');
});
