import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, chown, mkdir, readdir, stat, symlink, writeFile, lstat } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { readPrivateFile, readRegularFile, sharedPaths, tightenOnStart, tightenTree, userConfigDir } from '../../../src/storage/private-mode';
import { writeJsonAtomic, writeJsonAtomicSync } from '../../../src/storage/atomic';
import { appendJsonl, openJsonlAppender } from '../../../src/storage/jsonl';

const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

test('writers create private files in private folders, whatever the umask', async () => {
  const previous = process.umask(0o000);
  try {
    await withTempDir(async (dir) => {
      await writeJsonAtomic(join(dir, 'a', 'b', 'x.json'), {});
      writeJsonAtomicSync(join(dir, 'c', 'y.json'), {});
      appendJsonl(join(dir, 'd', 'e', 'z.jsonl'), { n: 1 });
      const appender = openJsonlAppender(join(dir, 'f', 'w.jsonl'));
      appender.append({ n: 1 });
      appender.close();
      for (const folder of ['a', 'a/b', 'c', 'd', 'd/e', 'f']) assert.equal(await modeOf(join(dir, folder)), 0o700, folder);
      for (const file of ['a/b/x.json', 'c/y.json', 'd/e/z.jsonl', 'f/w.jsonl']) assert.equal(await modeOf(join(dir, file)), 0o600, file);
    });
  } finally {
    process.umask(previous);
  }
});

test('tightenTree removes group and other bits, keeps the owner\'s, leaves symlinks and their targets alone', async () => {
  await withTempDir(async (dir) => {
    const root = join(dir, '.legion');
    await mkdir(join(root, 'runs', 'r1'), { recursive: true });
    await writeFile(join(root, 'legion.json'), '{}');
    await writeFile(join(root, 'runs', 'r1', 'events.jsonl'), '');
    await writeFile(join(root, 'hook.sh'), '');
    await writeFile(join(dir, 'outside.txt'), '');
    await chmod(join(dir, 'outside.txt'), 0o644);
    await symlink(join(dir, 'outside.txt'), join(root, 'link'));
    for (const d of [root, join(root, 'runs'), join(root, 'runs', 'r1')]) await chmod(d, 0o755);
    await chmod(join(root, 'legion.json'), 0o644);
    await chmod(join(root, 'runs', 'r1', 'events.jsonl'), 0o666);
    await chmod(join(root, 'hook.sh'), 0o755);

    assert.equal((await sharedPaths(root)).length, 6, 'doctor sees the 6 shared paths');
    const report = await tightenTree(root);
    assert.equal(report.tightened.length, 6);
    assert.deepEqual(report.failed, []);
    assert.equal(await modeOf(root), 0o700);
    assert.equal(await modeOf(join(root, 'runs', 'r1')), 0o700);
    assert.equal(await modeOf(join(root, 'legion.json')), 0o600);
    assert.equal(await modeOf(join(root, 'runs', 'r1', 'events.jsonl')), 0o600);
    assert.equal(await modeOf(join(root, 'hook.sh')), 0o700, 'the owner keeps execute');
    assert.equal(await modeOf(join(dir, 'outside.txt')), 0o644, 'a symlink target outside is untouched');
    assert.ok((await lstat(join(root, 'link'))).isSymbolicLink());
    assert.deepEqual(await sharedPaths(root), []);
    assert.equal((await tightenTree(root)).tightened.length, 0, 'idempotent');
  });
});

test('tightenOnStart: one notice for what changed, what failed says the fix; none when private; a missing root is fine', async () => {
  await withTempDir(async (dir) => {
    await mkdir(join(dir, 'ws'));
    await chmod(join(dir, 'ws'), 0o755);
    const notice = await tightenOnStart([join(dir, 'ws'), join(dir, 'missing')], new Set());
    assert.match(notice!, /^made 1 file\(s\) and folder\(s\) in .*ws private \(owner only: folders 0700, files 0600\)$/);
    assert.equal(await tightenOnStart([join(dir, 'ws')], new Set()), null);
    await chmod(join(dir, 'ws'), 0o750);
    const refusing = { lstat, readdir: async () => [], chmod: async () => { throw Object.assign(new Error('x'), { code: 'EPERM' }); } };
    assert.match((await tightenOnStart([join(dir, 'ws')], new Set(), refusing))!, /1 path\(s\) in .*ws stay readable by others \(first: .*ws: EPERM\); fix with chmod -R go-rwx/);
  });
});

test('userConfigDir honours XDG_CONFIG_HOME', () => {
  assert.equal(userConfigDir({ XDG_CONFIG_HOME: '/x' }, '/home/u'), '/x/legion');
  assert.equal(userConfigDir({}, '/home/u'), '/home/u/.config/legion');
});

test('tightenOnStart walks the tree without a round trip through the thread pool (it runs before the first frame): done before a setImmediate, and it still tightens', async () => {
  await withTempDir(async (dir) => {
    const root = join(dir, '.legion');
    for (let r = 0; r < 5; r++) {
      await mkdir(join(root, 'runs', `r${r}`, 'sessions'), { recursive: true });
      for (let s = 0; s < 4; s++) await writeFile(join(root, 'runs', `r${r}`, 'sessions', `s${s}.jsonl`), '{}\n');
    }
    const open = async (path: string): Promise<void> => {
      const s = await stat(path);
      await chmod(path, s.isDirectory() ? 0o755 : 0o644);
      if (s.isDirectory()) for (const name of await readdir(path)) await open(join(path, name));
    };
    await open(root); // 12 folders and 20 files that others may read
    let immediate = false;
    setImmediate(() => { immediate = true; });
    const notice = await tightenOnStart([root], new Set());
    assert.equal(immediate, false, 'the walk waited on I/O callbacks');
    assert.match(notice ?? '', /made 32 file\(s\) and folder\(s\) in .*\.legion private/);
    assert.equal(await modeOf(join(root, 'runs', 'r4', 'sessions', 's3.jsonl')), 0o600);
  });
});

test('readPrivateFile: one check for every private file (trust key, registry, feed token): a regular file of this user, open to no one else, not too large', async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, 'secret');
    await writeFile(file, 'the secret\n', { mode: 0o600 });
    assert.deepEqual(readPrivateFile(file), { ok: true, text: 'the secret\n' });
    assert.deepEqual(readPrivateFile(join(dir, 'none')), { ok: false, missing: true });
    assert.deepEqual(readPrivateFile(join(file, 'below-a-file')), { ok: false, missing: true }, 'ENOTDIR: no such file either');

    const refusal = (path: string, rules?: Parameters<typeof readPrivateFile>[1]) => {
      const read = readPrivateFile(path, rules);
      return read.ok || read.missing ? null : { refusal: read.refusal, message: read.message };
    };
    // Open to others: a secret refuses any group/other bit; a file others may read, only their write bits.
    for (const mode of [0o640, 0o604, 0o620, 0o602, 0o610, 0o601]) {
      await chmod(file, mode);
      assert.deepEqual(refusal(file), { refusal: 'open-to-others', message: `${file} is readable or writable by others (mode ${mode.toString(8)})` });
      const writable = (mode & 0o022) !== 0;
      assert.deepEqual(refusal(file, { openBits: 0o022 }), writable ? { refusal: 'open-to-others', message: `${file} is writable by others (mode ${mode.toString(8)})` } : null);
    }
    await chmod(file, 0o600);
    // Another user's file: a planted one (the owner could rewrite it at will).
    const someoneElse = (process.getuid?.() ?? 0) + 1;
    assert.deepEqual(refusal(file, { uid: someoneElse }), { refusal: 'another-user', message: `${file} belongs to another user (uid ${process.getuid?.() ?? 0})` });
    if (process.getuid?.() === 0) {
      const planted = join(dir, 'planted');
      await writeFile(planted, 'x', { mode: 0o600 });
      await chown(planted, 65534, 65534);
      assert.equal(refusal(planted)?.refusal, 'another-user');
      // An undefined owner is the default one, not no check (it read a planted file).
      assert.equal(refusal(planted, { uid: undefined })?.refusal, 'another-user');
    }
    // Not a regular file: a link (to a private file: the link itself is refused, unfollowed), a folder, a FIFO (opened without waiting for a writer).
    await symlink(file, join(dir, 'link'));
    assert.deepEqual(refusal(join(dir, 'link')), { refusal: 'not-a-file', message: `${join(dir, 'link')} is not a regular file (a symbolic link)` });
    await mkdir(join(dir, 'folder'), { mode: 0o700 });
    assert.equal(refusal(join(dir, 'folder'))?.refusal, 'not-a-file');
    if (spawnSync('mkfifo', ['-m', '600', join(dir, 'fifo')]).status === 0) assert.equal(refusal(join(dir, 'fifo'))?.refusal, 'not-a-file');
    assert.deepEqual(refusal(file, { maxBytes: 4 }), { refusal: 'too-large', message: `${file} is larger than 4 bytes` });
    assert.equal(refusal(file, { maxBytes: 11 }), null);
  });
});

test('readRegularFile (the trust marker; under readPrivateFile): no owner or mode rule of its own, but only a regular file, unfollowed, unwaited, never more than its bound — also when the file holds more than its stat said', async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, 'marker');
    await writeFile(file, 'v1:abc', { mode: 0o644 });
    assert.deepEqual(readRegularFile(file, 256), { ok: true, text: 'v1:abc' });
    const refusal = (path: string, max: number): string | null => {
      const read = readRegularFile(path, max);
      return read.ok || read.missing ? null : read.refusal;
    };
    assert.equal(refusal(file, 3), 'too-large');
    await symlink('/dev/zero', join(dir, 'zero'));
    assert.equal(refusal(join(dir, 'zero'), 256), 'not-a-file');
    if (spawnSync('mkfifo', ['-m', '600', join(dir, 'fifo')]).status === 0) assert.equal(refusal(join(dir, 'fifo'), 256), 'not-a-file');
    // A file whose stat says less than it holds (as one that grew after the check): /proc's say 0 bytes.
    const status = '/proc/self/status';
    if ((await stat(status).catch(() => null))?.size === 0) {
      assert.equal(refusal(status, 64), 'too-large');
      const bounded = readPrivateFile(status, { openBits: 0o022, maxBytes: 64 });
      assert.ok(!bounded.ok && !bounded.missing && bounded.refusal === 'too-large', JSON.stringify(bounded).slice(0, 200));
    }
  });
});
