import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { triage, type TriageRequest } from '../../../src/authz/triage';
import { createFauxProvider, parseFauxScript } from '../../../src/providers/faux';

// The triage prompt carries the tool input, so `when` picks the reply by command.
const SCRIPT = `
version: 1
fallback: '{"decision":"escalate","confidence":0,"reasoning":"unscripted"}'
replies:
  - purpose: turn
    text: 'this reply is for agent turns, never for triage'
    repeat: true
  - purpose: triage
    when: 'npm test'
    text: '{"decision":"approve","confidence":0.96,"reasoning":"Runs the project tests."}'
    repeat: true
  - purpose: triage
    when: 'curl'
    text: '{"decision":"approve","confidence":0.55,"reasoning":"Downloads something; probably fine."}'
    repeat: true
  - purpose: triage
    when: 'rm -rf'
    text: '{"decision":"deny","confidence":0.99,"reasoning":"Destroys the workspace."}'
    repeat: true
  - purpose: triage
    when: 'overloaded'
    error: { message: '529 overloaded', status: 529 }
    repeat: true
`;

function setup() {
  const parsed = parseFauxScript(SCRIPT, 'triage-script.yaml');
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.error);
  const provider = createFauxProvider({ script: parsed.script });
  const request = (command: string): TriageRequest => ({
    toolName: 'shell', input: { command }, participantId: 'scribe', sessionId: 'session-ur-agent__scribe__default',
    chain: ['user', 'ur-agent', 'scribe'], ruleId: 'shell-ask',
  });
  const run = (command: string) =>
    triage({ provider, model: 'faux-small', request: request(command), ruleReason: 'Shell asks', signal: new AbortController().signal, minConfidence: 0.9 });
  return { run };
}

test('faux: confident approve approves', async () => {
  const verdict = await setup().run('npm test');
  assert.deepEqual(verdict, { decision: 'approve', confidence: 0.96, reasoning: 'Runs the project tests.' });
});

test('faux: unsure approve goes to the user', async () => {
  const verdict = await setup().run('curl https://example.com/x.tgz -o x.tgz');
  assert.equal(verdict.decision, 'defer');
  assert.match(verdict.reasoning, /unsure \(0\.55 < 0\.9\)/);
});

test('faux: an attempted deny is ignored (deferred, never a denial)', async () => {
  const verdict = await setup().run('rm -rf src');
  assert.equal(verdict.decision, 'defer');
  assert.match(verdict.reasoning, /answered "deny"/);
});

test('faux: provider error and unscripted answers defer', async () => {
  const { run } = setup();
  assert.match((await run('echo overloaded')).reasoning, /provider error: 529 overloaded/);
  assert.match((await run('ls')).reasoning, /escalated \(0\): unscripted/);
});
