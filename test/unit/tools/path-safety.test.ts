import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeSandbox } from '../../helpers/tool-context';
import { isInsideWorkspace, isLegionSegment, isUnderLegionDir, resolveWorkspacePath, rootOf } from '../../../src/tools/path-safety';

async function refused(root: string, input: string, pattern: RegExp): Promise<void> {
  const r = await resolveWorkspacePath(root, input);
  assert.equal(r.ok, false, `expected refusal of ${JSON.stringify(input.slice(0, 80))}`);
  if (!r.ok) assert.match(r.error, pattern, `error for ${JSON.stringify(input.slice(0, 80))}`);
}

test('resolveWorkspacePath accepts paths inside, normalized', async () => {
  const sb = await makeSandbox();
  try {
    await mkdir(join(sb.root, 'src'), { recursive: true });
    await writeFile(join(sb.root, 'src', 'a.ts'), 'x');
    const cases: [string, string][] = [
      ['src/a.ts', 'src/a.ts'],
      ['./src/a.ts', 'src/a.ts'],
      ['src//a.ts', 'src/a.ts'],
      ['src/../src/a.ts', 'src/a.ts'],
      ['src/', 'src'],
      ['.', '.'],
      ['', '.'],
      ['new/dir/file.txt', 'new/dir/file.txt'],
      [join(sb.root, 'src', 'a.ts'), 'src/a.ts'],
      [sb.root, '.'],
      ['.legionnaire/x', '.legionnaire/x'],
      ['legion/x', 'legion/x'],
      ['a~b', 'a~b'],
    ];
    for (const [input, rel] of cases) {
      const r = await resolveWorkspacePath(sb.root, input);
      assert.ok(r.ok, `accept ${input}: ${r.ok ? '' : r.error}`);
      assert.equal(r.relative, rel, input);
      assert.equal(r.absolute, rel === '.' ? sb.root : join(sb.root, rel));
      assert.equal(rootOf(r.absolute, r.relative), sb.root);
    }
  } finally {
    await sb.cleanup();
  }
});

test('resolveWorkspacePath refuses escapes, ~, NUL and huge paths', async () => {
  const sb = await makeSandbox();
  try {
    await refused(sb.root, '..', /outside the workspace/);
    await refused(sb.root, '../outside/sentinel.txt', /outside the workspace/);
    await refused(sb.root, 'a/../../outside', /outside the workspace/);
    await refused(sb.root, 'a/b/../../../x', /outside the workspace/);
    await refused(sb.root, '/etc/passwd', /outside the workspace/);
    await refused(sb.root, join(sb.outside, 'sentinel.txt'), /outside the workspace/);
    await refused(sb.root, `${sb.root}/../outside`, /outside the workspace/);
    await refused(sb.root, `${sb.root}-sibling/x`, /outside the workspace/);
    await refused(sb.root, '~', /starts with "~"/);
    await refused(sb.root, '~/x', /home expansion/);
    await refused(sb.root, '~root/.ssh', /home expansion/);
    await refused(sb.root, 'a\0b', /NUL/);
    await refused(sb.root, 'x'.repeat(5000), /too long/);
    await refused(sb.root, '   ', /blank/);
  } finally {
    await sb.cleanup();
  }
});

test('resolveWorkspacePath refuses .legion in every spelling', async () => {
  const sb = await makeSandbox();
  try {
    const spellings = [
      '.legion', '.legion/', '.legion/secret.json', './.legion/secret.json', 'x/../.legion/secret.json',
      '.LEGION/secret.json', '.Legion', '.LeGiOn/runs', '.legion./secret.json', '.legion../x', '.legion /x',
      '.legion\\secret.json', 'sub/.legion/x', '.legion/../src', '.le\u200Bgion/x', '.leg\u00ADion',
      '\uFF0E\uFF4C\uFF45\uFF47\uFF49\uFF4F\uFF4E', '.legıon'.toUpperCase(), '.LEGİON', '.legion::$DATA', 'LEGION~1/x',
      '.legion'.normalize('NFD'), join(sb.root, '.legion', 'secret.json'), join(sb.root, '.LEGION'),
    ];
    for (const s of spellings) await refused(sb.root, s, /\.legion/);
  } finally {
    await sb.cleanup();
  }
});

test('resolveWorkspacePath follows symlinks: out is refused, inside is resolved', async () => {
  const sb = await makeSandbox();
  try {
    await mkdir(join(sb.root, 'real'), { recursive: true });
    await writeFile(join(sb.root, 'real', 'f.txt'), 'x');
    await symlink(sb.outside, join(sb.root, 'out-dir'));
    await symlink(join(sb.outside, 'sentinel.txt'), join(sb.root, 'out-file'));
    await symlink(join(sb.outside, 'nope', 'deeper'), join(sb.root, 'dangling-out'));
    await symlink('../outside/new.txt', join(sb.root, 'relative-out'));
    await symlink(join(sb.root, '.legion'), join(sb.root, 'to-legion'));
    await symlink('real', join(sb.root, 'in-dir'));
    await symlink(join(sb.root, 'loop-b'), join(sb.root, 'loop-a'));
    await symlink(join(sb.root, 'loop-a'), join(sb.root, 'loop-b'));

    await refused(sb.root, 'out-dir', /symlink/);
    await refused(sb.root, 'out-dir/sentinel.txt', /symlink/);
    await refused(sb.root, 'out-dir/not-yet/created.txt', /symlink/);
    await refused(sb.root, 'out-file', /symlink/);
    await refused(sb.root, 'dangling-out', /symlink/);
    await refused(sb.root, 'dangling-out/x/y', /symlink/);
    await refused(sb.root, 'relative-out', /symlink/);
    await refused(sb.root, 'to-legion/secret.json', /\.legion/);
    await refused(sb.root, 'to-legion/new.txt', /\.legion/);
    await refused(sb.root, 'loop-a', /symlink loop/);
    await refused(sb.root, 'loop-a/x', /symlink loop/);

    const inside = await resolveWorkspacePath(sb.root, 'in-dir/f.txt');
    assert.ok(inside.ok);
    assert.equal(inside.relative, 'real/f.txt');
    const fresh = await resolveWorkspacePath(sb.root, 'in-dir/new/file.txt');
    assert.ok(fresh.ok);
    assert.equal(fresh.relative, 'real/new/file.txt');
    // `link/..` is taken lexically (the root), the form every tool then operates on.
    const up = await resolveWorkspacePath(sb.root, 'out-dir/..');
    assert.ok(up.ok);
    assert.equal(up.relative, '.');
  } finally {
    await sb.cleanup();
  }
});

test('resolveWorkspacePath works through a symlinked root and reports a missing root', async () => {
  const sb = await makeSandbox();
  try {
    const alias = join(sb.base, 'alias');
    await symlink(sb.root, alias);
    const r = await resolveWorkspacePath(alias, join(alias, 'a.txt'));
    assert.ok(r.ok);
    assert.equal(r.absolute, join(sb.root, 'a.txt'));
    assert.equal(r.relative, 'a.txt');
    const gone = await resolveWorkspacePath(join(sb.base, 'missing'), 'a.txt');
    assert.equal(gone.ok, false);
    if (!gone.ok) assert.match(gone.error, /not accessible/);
  } finally {
    await sb.cleanup();
  }
});

test('isUnderLegionDir / isLegionSegment', () => {
  for (const yes of ['.legion', 'a/.legion', '.legion/x', 'a\\.LEGION\\b', '.Legion.', 'x/.legion /y']) {
    assert.equal(isUnderLegionDir(yes), true, yes);
  }
  for (const no of ['legion', '.legions', 'a/.legion-backup', 'my.legion', '', '.', '..', '.legio']) {
    assert.equal(isUnderLegionDir(no), false, no);
  }
  assert.equal(isLegionSegment('.LEGION'), true);
  assert.equal(isLegionSegment('src'), false);
});

test('isInsideWorkspace: strictly inside, never .legion', () => {
  assert.equal(isInsideWorkspace('/w', '/w/a/b.txt'), true);
  assert.equal(isInsideWorkspace('/w', '/w'), false);
  assert.equal(isInsideWorkspace('/w', '/w-other/a'), false);
  assert.equal(isInsideWorkspace('/w', '/outside'), false);
  assert.equal(isInsideWorkspace('/w', '/w/.legion/x'), false);
  assert.equal(isInsideWorkspace('/w', '/w/sub/.LEGION/x'), false);
});
