import { test } from 'node:test';
import assert from 'node:assert/strict';
import { shippedRules, shell } from '../../../helpers/rules';

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
