import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { shippedRules, shell } from '../../../helpers/rules';
import { evaluateRules } from '../../../../src/authz/rules/evaluate';

/**
 * The shipped denies of a recursive delete, chmod or find across `/` (docs/shell-rules.md#deny-and-ask-rules)
 * hold when the path is written another way bash or the program reads as `/` or as every folder
 * of it: `..` and `.` components and repeated slashes (`/usr/../*`, `//./`), or a file-name pattern
 * that is the whole first component (`/*\/`, `/[a-z]*`, `/???`). These only asked.
 */
const decide = (command: string) => shell(shippedRules(), command);

test('a recursive delete, chmod or find of / written with .., . or // or a pattern of the top folders is denied', () => {
  for (const [command, rule] of [
    ['rm -rf /usr/../*', 'no-rm-root'],
    ['rm -rf /*/', 'no-rm-root'],
    ['rm -rf /[a-z]*', 'no-rm-root'],
    ['rm -rf /???', 'no-rm-root'],
    ['rm -rf //usr/../', 'no-rm-root'],
    ['rm -rf /./usr/', 'no-rm-root'],
    ['rm -fr /etc/../home/', 'no-rm-root'],
    ['sudo rm -r -f /var/./../*', 'no-rm-root'],
    ['find /usr/.. -delete', 'no-find-delete-root'],
    ['find //./ -exec rm {} +', 'no-find-delete-root'],
    ['chmod -R 777 /usr/..', 'no-chmod-root'],
    ['chown -R nobody /var/../*', 'no-chmod-root'],
  ] as const) {
    const outcome = decide(command);
    assert.deepEqual([outcome.decision, outcome.ruleId], ['deny', rule], command);
  }
});

test('paths below the top folders are not read as /', () => {
  for (const command of ['rm -rf /tmp/build/', 'rm -rf /tmp/*', 'rm -rf build/../dist', 'rm -rf /home/me/project/*/node_modules', 'find /tmp/x/.. -delete', 'chmod -R 755 /opt/app/./bin']) {
    assert.notEqual(decide(command).decision, 'deny', command);
  }
});

/**
 * The same denies hold for paths bash resolves from the working folder (the workspace root, then
 * each literal `cd` earlier in the line), `~` (the user's home) and `/proc/self/root` (shell-cwd.ts).
 * These only asked, and a plain one ran under a shell `auto` authorization.
 */
const DEEP = '/home/me/src/team/project';
const at = (command: string, workspaceRoot = DEEP, homeDir: string | null = '/home/me') =>
  evaluateRules(shippedRules(), { toolName: 'shell', input: { command }, participantId: 'agent-a', workspaceRoot, ...(homeDir !== null ? { homeDir } : {}), realPath: (path) => (path === '.git' ? '.git' : null) });

test('a recursive delete, chmod or find of / written relative to the working folder, ~ or /proc/self/root is denied', () => {
  for (const [command, rule] of [
    ['rm -rf ../../../../../../../../../../../../*', 'no-rm-root'],
    ['cd / && rm -rf *', 'no-rm-root'],
    ['cd /; rm -rf *', 'no-rm-root'],
    ['cd /\nrm -rf *', 'no-rm-root'],
    ['cd /tmp && cd .. && rm -rf *', 'no-rm-root'],
    ['cd / && cd /tmp && cd - && rm -rf ./*', 'no-rm-root'],
    ['rm -rf ~/../../*', 'no-rm-root'],
    ['find ~/../.. -delete', 'no-find-delete-root'],
    ['rm -rf /proc/self/root/*', 'no-rm-root'],
    ['rm -rf /proc/1/root/', 'no-rm-root'],
    ['cd / && chmod -R 777 .', 'no-chmod-root'],
    ['cd ../../../../.. && find . -delete', 'no-find-delete-root'],
    ['sudo rm -rf ../../../../../*', 'no-rm-root'],
    ["bash -c 'cd / && rm -rf *'", 'no-rm-root'],
    ['cd && rm -rf *', 'no-rm-root'],
    ['rm -rf ../../..', 'no-rm-root'],
  ] as const) {
    const outcome = at(command);
    assert.deepEqual([outcome.decision, outcome.ruleId], ['deny', rule], command);
  }
});

test('relative paths that stay below the top folders keep their outcome; an unknown folder asks', () => {
  for (const command of ['rm -rf ./build', 'rm -rf ../sibling-project/tmp', 'cd build && rm -rf *', 'find . -name x -delete', 'chmod -R 755 dist', 'cd /tmp && rm -rf *']) {
    assert.notEqual(at(command).decision, 'deny', command);
  }
  // Plain words: allowed or not as before, not asked for by the resolution.
  assert.deepEqual(at('rm -rf ./build').decision, decide('rm -rf ./build').decision);
  // `cd -` with no previous folder in the line, `popd`: where the relative path lands is not known.
  for (const command of ['cd - && rm -rf *', 'popd && rm -rf ../../*']) assert.equal(at(command).decision, 'ask', command);
  // Without a home folder, `~/../..` is not resolved (it is not plain words: it asks, as before).
  const homeless = at('rm -rf ~/../../*', DEEP, null);
  assert.deepEqual([homeless.decision, homeless.fallback?.decision, Boolean(homeless.notPlain)], [null, 'ask', true]);
  // A line that sets HOME: `~` not resolved from the user's home.
  assert.notEqual(at('HOME=/home/me/x; rm -rf ~/../x').decision, 'deny');
});

test('the resolved views are remembered per working folder and home', () => {
  assert.equal(at('rm -rf ../../*', '/home/me/src').decision, 'deny');
  assert.notEqual(at('rm -rf ../../*', '/home/me/src/team/project').decision, 'deny');
  assert.equal(at('rm -rf ../../*', '/home/me/src').decision, 'deny');
  assert.equal(at('rm -rf ~/../../*', DEEP, '/home/me').decision, 'deny');
  assert.notEqual(at('rm -rf ~/../../*', DEEP, '/home/me/a/b').decision, 'deny');
});

test('cd through eval, CDPATH, find without a starting point and /proc/self/cwd are followed', () => {
  for (const [command, rule] of [
    ['cd / && find -delete', 'no-find-delete-root'],
    ['cd / && find -L -name x -delete', 'no-find-delete-root'],
    ['eval cd /; rm -rf *', 'no-rm-root'],
    ['cd / && rm -rf /proc/self/cwd/*', 'no-rm-root'],
    ['pushd / && rm -rf *', 'no-rm-root'],
    ['cd ///usr/.. && rm -rf -- *', 'no-rm-root'],
    ['rm -rf /home/me', 'no-rm-root'],
  ] as const) {
    const outcome = at(command);
    assert.deepEqual([outcome.decision, outcome.ruleId], ['deny', rule], command);
  }
  // A child shell's cd does not move the line; CDPATH makes `cd name` unknown.
  assert.notEqual(at("bash -c 'cd /'; rm -rf ./build").decision, 'deny');
  assert.equal(at('CDPATH=/ cd usr && rm -rf *').decision, 'ask');
  assert.notEqual(at('cd / && rm -rf find').decision, 'deny');
});

test('a cd that may fail leaves the folder before it possible; `time cd` moves the line', () => {
  // From DEEP (5 levels), `cd` to a missing folder fails and `../../../../../*` is `/*`.
  for (const command of ['cd /no/such/a/b/c/d/e/f; rm -rf ../../../../../*', 'cd /no/such/a/b/c/d/e/f && rm -rf ../../../../../*', 'time cd / && rm -rf *', 'time -p cd /; rm -rf *']) {
    const outcome = at(command);
    assert.deepEqual([outcome.decision, outcome.ruleId], ['deny', 'no-rm-root'], command);
  }
  assert.notEqual(at('cd build && cd ../dist && cd ../docs && rm -rf *').decision, 'deny');
});

/**
 * `$HOME` and `${HOME}` as a path's first component are the user's home too: `rm -rf $HOME/.`
 * (and `/..`, `/../..`, a `cd $HOME` before a relative path) reached none of the shipped denies
 * (the regex knows `$HOME` only bare, and a line mentioning HOME left `~` unresolved): it asked.
 */
test('a recursive delete, chmod or find of the home folder written through $HOME or ${HOME} is denied', () => {
  for (const [command, rule] of [
    ['rm -rf $HOME/.', 'no-rm-root'],
    ['rm -rf "$HOME"/./', 'no-rm-root'],
    ['rm -rf ${HOME}/..', 'no-rm-root'],
    ['rm -rf "${HOME}/../.."', 'no-rm-root'],
    ['cd $HOME && rm -rf *', 'no-rm-root'],
    ['cd "${HOME}/x" && rm -rf ../*', 'no-rm-root'],
    ['find $HOME/. -delete', 'no-find-delete-root'],
    ['chmod -R 000 ${HOME}/.', 'no-chmod-root'],
  ] as const) {
    const outcome = at(command);
    assert.deepEqual([outcome.decision, outcome.ruleId], ['deny', rule], command);
  }
  for (const command of ['rm -rf $HOME/project/build', 'rm -rf "$HOME/.cache/x"', 'cd $HOME/src && rm -rf ./dist', 'rm -rf $HOMEDIR/.']) {
    assert.notEqual(at(command).decision, 'deny', command);
  }
});
