import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withTempDir } from '../../../helpers/tmp';
import { createSecretFinder } from '../../../../src/tools/sandbox/secrets';
import { DEFAULT_SECRET_PATTERNS } from '../../../../src/tools/sandbox/secret-patterns';

/**
 * Every `.legion/` of the workspace is hidden from the sandbox (a nested workspace's rules.yaml,
 * honoured at its next start). The workspace is the attacker's to fill: 25,000 empty files used
 * up the scan's entry budget, and a nested workspace moved under `node_modules/` or past 8 levels
 * was no longer looked for — its `.legion/` writable at the next call, then moved back. The
 * search for `.legion/` must see every directory, or say it did not.
 */
test('the .legion search is not used up by files: a nested workspace is found after 25,000 files at the root', async () => {
  await withTempDir(async (dir) => {
    const ws = join(dir, 'ws');
    mkdirSync(join(ws, 'packages', 'app', '.legion'), { recursive: true });
    for (let i = 0; i < 25_000; i++) writeFileSync(join(ws, `f${String(i).padStart(5, '0')}`), '');
    const found = createSecretFinder(DEFAULT_SECRET_PATTERNS).find({ workspaceRoot: ws, home: join(dir, 'home') });
    assert.ok(found.dirs.includes(join(ws, 'packages', 'app', '.legion')), 'the nested .legion/ was not found');
    assert.equal(found.incomplete, undefined);
  });
});

test('a nested workspace moved under a skipped folder name or deeper than the secret scan is still found', async () => {
  await withTempDir(async (dir) => {
    const ws = join(dir, 'ws');
    const moved = [
      join(ws, 'node_modules', 'packages', 'app', '.legion'),
      join(ws, 'dist', 'app', '.legion'),
      join(ws, '.git', 'objects', 'app', '.legion'),
      join(ws, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'app', '.legion'),
    ];
    for (const legion of moved) mkdirSync(legion, { recursive: true });
    const found = createSecretFinder(DEFAULT_SECRET_PATTERNS).find({ workspaceRoot: ws, home: join(dir, 'home') });
    for (const legion of moved) assert.ok(found.dirs.includes(legion), `${legion} was not found`);
    assert.equal(found.incomplete, undefined);
  });
});

test('a workspace with more directories than the .legion search may read: the scan says it is incomplete, and why', async () => {
  await withTempDir(async (dir) => {
    const ws = join(dir, 'ws');
    for (let i = 0; i < 60; i++) mkdirSync(join(ws, 'flood', `d${i}`), { recursive: true });
    const finder = createSecretFinder(DEFAULT_SECRET_PATTERNS, { directories: 50 });
    const found = finder.find({ workspaceRoot: ws, home: join(dir, 'home') });
    assert.match(found.incomplete ?? '', /more than 50 directories/);
    // Cached: the next call says it again, unchanged.
    assert.match(finder.find({ workspaceRoot: ws, home: join(dir, 'home') }).incomplete ?? '', /more than 50 directories/);
  });
});
