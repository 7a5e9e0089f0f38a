import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hookAttackScene, realProbe, hostGit } from '../../../helpers/sandbox-fixture';

const probe = await realProbe();
const skip = probe.kind === 'available' ? false : `no sandbox on this machine: ${probe.reason}`;

/**
 * Projects that keep their hooks in the work tree often link them into place
 * (`ln -s ../../scripts/pre-commit .git/hooks/pre-commit`): git runs the file the link leads to.
 * `.git/hooks` was read-only in the sandbox, the link with it, but its target was an ordinary
 * work-tree file: a sandboxed command appended to `scripts/pre-commit` (or created the missing
 * target of a dangling link) and the user's next `git commit` / `git push` ran it, unsandboxed.
 * The targets of linked hooks are guarded like the hooks (and, through the same list, ask a
 * person for the file tools).
 */
const git = hostGit;
const scene = hookAttackScene(probe, (fx) => {
  mkdirSync(join(fx.ws, 'scripts'), { recursive: true });
  writeFileSync(join(fx.ws, 'scripts', 'pre-commit'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  const hooks = join(fx.ws, '.git', 'hooks');
  mkdirSync(hooks, { recursive: true });
  rmSync(join(hooks, 'pre-commit'), { force: true });
  symlinkSync('../../scripts/pre-commit', join(hooks, 'pre-commit'));
  // Dangling: the project links a hook it has not written yet.
  symlinkSync('../../scripts/commit-msg', join(hooks, 'commit-msg'));
});

test('the work-tree files that linked hooks lead to (a dangling link\'s too) are among git\'s guarded paths', () => {
  const guarded = scene.guarded();
  assert.ok(guarded.includes(join(scene.fx.ws, 'scripts', 'pre-commit')), guarded.join(', '));
  assert.ok(guarded.includes(join(scene.fx.ws, 'scripts', 'commit-msg')), `the dangling link's target: ${guarded.join(', ')}`);
  assert.ok(!guarded.includes(join(scene.fx.ws, 'scripts')), 'only the targets, not their folder');
});

test('sandboxed: a command cannot change or create the file a linked hook runs at the user\'s next commit', { skip }, async () => {
  // The control: git runs what the link leads to.
  writeFileSync(join(scene.fx.ws, 'scripts', 'pre-commit'), `#!/bin/sh\ntouch ${scene.pwned}.control\n`);
  git(scene.fx.ws, 'commit', '-q', '--allow-empty', '-m', 'control');
  assert.ok(existsSync(`${scene.pwned}.control`), 'git runs the linked hook\'s target');
  writeFileSync(join(scene.fx.ws, 'scripts', 'pre-commit'), '#!/bin/sh\nexit 0\n');

  const result = await scene.run(`printf 'touch ${scene.pwned}\\n' >> scripts/pre-commit; printf '#!/bin/sh\\ntouch ${scene.pwned}\\n' > scripts/commit-msg; chmod +x scripts/commit-msg; true`);
  assert.match(result.content, /Read-only file system|blocked by the sandbox/, result.content);
  assert.equal(readFileSync(join(scene.fx.ws, 'scripts', 'pre-commit'), 'utf8'), '#!/bin/sh\nexit 0\n');
  assert.equal(existsSync(join(scene.fx.ws, 'scripts', 'commit-msg')), false, 'a planted target of a dangling link is removed');
  git(scene.fx.ws, 'commit', '-q', '--allow-empty', '-m', 'host commit');
  assert.equal(existsSync(scene.pwned), false, 'the user\'s commit ran what the sandboxed command wrote');
});
