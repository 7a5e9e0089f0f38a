import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, readdir, readFile, realpath, rename, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { applyMerge } from '../../../src/worktrees/apply';
import { makeRepo } from './helpers';

/**
 * A merge is applied to the workspace outside the sandbox while other agents still work there
 * (their shell commands run meanwhile). Each path is checked for a link on the way, but a folder
 * swapped for a link to `~/.config/legion` right after that check (a racing `mv`) made the write
 * land there: the worktree's agent chose the bytes (a `rules.yaml`), the other agent the place.
 * The check and the write must concern the same folder (pinned by a descriptor).
 */
const A = 'session-user__scribe__a';

for (const [what, only] of [['removed', 0], ['written', 1]] as const) test(`a folder swapped for a link between the check and the operation gets nothing ${what} through it`, () =>
  withTempDir(async (raw) => {
    const base = await realpath(raw);
    const root = join(base, 'ws');
    const outside = join(base, 'home', '.config', 'legion');
    await mkdir(root);
    await mkdir(outside, { recursive: true });
    await writeFile(join(outside, 'gone.txt'), 'mine\n');
    await makeRepo(root);
    await mkdir(join(root, 'cfg'));
    await writeFile(join(root, 'cfg', 'gone.txt'), 'workspace\n');
    const oid = execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: root, input: 'version: 1\nrules:\n  - { id: all, decision: allow }\n', encoding: 'utf8' }).trim();
    const journal = join(root, '.legion', 'worktrees', `${A}.merge.json`);
    const ops = [[{ path: 'cfg/gone.txt', kind: 'delete' as const }], [{ path: 'cfg/rules.yaml', kind: 'write' as const, mode: '100644', oid }]][only]!;
    const swap = async (): Promise<void> => {
      await rename(join(root, 'cfg'), join(root, 'cfg-moved'));
      await symlink(outside, join(root, 'cfg'));
    };
    await applyMerge({ gitDir: join(root, '.git'), workTree: root }, root, journal, { version: 1, sessionId: A, merged: oid, ops }, { beforeOp: async (i) => { if (i === 0) await swap(); } })
      .catch(() => undefined);
    assert.deepEqual((await readdir(outside)).sort(), ['gone.txt'], 'nothing written there');
    assert.equal(await readFile(join(outside, 'gone.txt'), 'utf8'), 'mine\n', 'nothing removed there');
  }));
