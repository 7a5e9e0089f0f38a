import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkKeys, checkNode, formatChecks } from '../../../src/cli/doctor/checks';

test('checkNode: 20 and later pass; older fails with the fix', () => {
  assert.equal(checkNode('v20.0.0').ok, true);
  assert.equal(checkNode('v22.3.1').ok, true);
  const old = checkNode('v18.19.0');
  assert.equal(old.ok, false);
  assert.match(formatChecks([old]), /^✗ Node v18\.19\.0 is too old \(needs 20 or later\)\n    fix: install Node 20 or later/);
});

test('checkKeys: names the variables set, never their values; blank does not count; a local server counts', () => {
  const c = checkKeys({ ANTHROPIC_API_KEY: 'sk-ant-secret', OPENAI_API_KEY: '  ', GEMINI_API_KEY: 'AIza-secret' });
  assert.equal(c.detail, 'provider keys set: ANTHROPIC_API_KEY, GEMINI_API_KEY');
  assert.ok(!JSON.stringify(c).includes('secret'));
  assert.equal(checkKeys({ OPENAI_BASE_URL: 'http://localhost:11434/v1' }).ok, true);
  assert.equal(checkKeys({}).ok, false);
});
