import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAuthorizer, workspaceRealPath } from '../../../../src/authz/authorizer';
import type { Participant } from '../../../../src/collective/participant';
import { shippedRules } from '../../../helpers/rules';
import { withTempDir } from '../../../helpers/tmp';

/**
 * The shipped read-only `git log`/`git show` run nothing but git (docs/shell-rules.md#read-only-commands):
 * a format placeholder `%G…` (`%G?`, `%GG`, `%GS`, `%GK`…) makes git verify each signed commit's
 * signature by running `gpg.program` (gpg, or ssh-keygen), a program the list does not name, on
 * the user's keyring, with the network when gpg fetches keys. Such a format asks. A real repository
 * holds a signed commit and a `gpg.program` that leaves a mark: whatever the authorizer allows runs
 * without the mark appearing.
 */
const USER: Participant = { id: 'user', kind: 'user', name: 'You', description: '', status: 'active', approvalAuthority: '*' };

test('a git format that verifies signatures asks; every allowed format runs no gpg', async () => {
  await withTempDir(async (ws) => {
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], { cwd: ws, encoding: 'utf8' });
    git('init', '-q');
    writeFileSync(join(ws, 'a.txt'), 'a\n');
    git('add', 'a.txt');
    git('commit', '-qm', 'first');
    const tree = git('rev-parse', 'HEAD^{tree}').trim();
    const parent = git('rev-parse', 'HEAD').trim();
    const body = `tree ${tree}\nparent ${parent}\nauthor t <t@t> 1700000000 +0000\ncommitter t <t@t> 1700000000 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\nsigned\n`;
    writeFileSync(join(ws, '.c'), body);
    const signed = git('hash-object', '-t', 'commit', '-w', '.c').trim();
    rmSync(join(ws, '.c'));
    git('update-ref', 'HEAD', signed);
    const mark = join(ws, '..', `gpg-ran-${process.pid}`);
    const program = join(ws, '..', `fake-gpg-${process.pid}`);
    writeFileSync(program, `#!/bin/sh\ntouch '${mark}'\nexit 1\n`);
    chmodSync(program, 0o755);
    git('config', 'gpg.program', program);
    try {
      const authorize = createAuthorizer({ gitConfigPaths: () => [], ruleSet: shippedRules(), workspaceRoot: ws, getParticipant: () => USER, realPath: workspaceRealPath(ws) });
      const decide = async (command: string) => (await authorize({ toolName: 'shell', input: { command }, participantId: 'user', sessionId: 's', chain: ['user'] })).decision;
      // The control: git does run gpg.program for such a format.
      execFileSync('bash', ['-c', 'git log --format=%G? >/dev/null'], { cwd: ws });
      assert.ok(existsSync(mark), 'the control: %G? ran gpg.program');
      rmSync(mark);
      for (const command of ['git log --format=%G?', 'git log --pretty=format:%GG', 'git log --pretty=tformat:%h%GS', 'git show --format=%GK HEAD', 'git log -1 --format=%n%GF']) {
        assert.equal(await decide(command), 'ask', command);
      }
      for (const command of ['git log --format=%h', 'git log --pretty=oneline', 'git show --format=%s%n%b HEAD', 'git log --format=%%G']) {
        const decision = await decide(command);
        if (decision !== 'allow') continue;
        execFileSync('bash', ['-c', `${command} >/dev/null`], { cwd: ws });
        assert.equal(existsSync(mark), false, `${command} is allowed and ran gpg`);
      }
      assert.equal(await decide('git log --format=%h'), 'allow');
    } finally {
      rmSync(mark, { force: true });
      rmSync(program, { force: true });
    }
  });
});
