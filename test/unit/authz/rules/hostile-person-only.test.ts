import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../../helpers/tmp';
import { createAuthorizer } from '../../../../src/authz/authorizer';
import { personOnly } from '../../../../src/authz/policy';
import { createHookEngine } from '../../../../src/conventions/hooks/engine';
import type { Participant } from '../../../../src/collective/participant';
import { rulesFrom, shippedRules } from '../../../helpers/rules';

const dev: Participant = { id: 'dev', kind: 'agent', name: 'dev', description: '', status: 'active', systemPrompt: 'x', provider: 'default', model: 'default', tools: ['shell'], toolAuthorizations: {}, approvalAuthority: [] };

/**
 * docs/shell-rules.md: a line that is not plain words is answered only by a person (personOnly).
 * A line Legion's parser cannot read at all (arithmetic, `case`, a comment, a function, over
 * 16 KiB) is not known to be plain words either, and bash runs its `$(…)` all the same: it asked
 * ("cannot check this shell command safely") without `notPlain`, so LLM triage or an agent
 * approver could approve `echo hi $(touch PWNED) $((1+2))`.
 */
const UNREADABLE = [
  'echo hi $(touch PWNED) $((1+2))',
  'echo hi $(touch PWNED); case x in x) echo y;; esac',
  'echo hi $(touch PWNED) #(',
  'echo hi $(touch PWNED); f() { :; }',
  `echo hi $(touch PWNED) ${'a'.repeat(17_000)}`,
];

test('a shell line the parser cannot read is answered only by a person (shipped rules, and rules that allow shell)', () => {
  for (const ruleSet of [shippedRules(), rulesFrom('version: 1\ndefaults: { unmatched: allow }\nrules:\n  - { id: all-shell, decision: allow, tool: shell }\n')]) {
    const authorize = createAuthorizer({ ruleSet, workspaceRoot: '/ws', getParticipant: (id) => (id === 'dev' ? dev : undefined) });
    for (const command of UNREADABLE) {
      const verdict = authorize({ toolName: 'shell', input: { command }, participantId: 'dev', sessionId: 's', chain: ['user', 'dev'] });
      assert.equal(verdict.decision, 'ask', `${command.slice(0, 60)}: ${verdict.reason.slice(0, 200)}`);
      assert.equal(personOnly(verdict), true, `${command.slice(0, 60)}: only a person may answer (${verdict.reason.slice(0, 200)})`);
    }
  }
});

test('a PreToolUse hook that asks keeps a line that is not plain words for a person', async () => {
  await withTempDir(async (dir) => {
    await writeFile(join(dir, 'ask.sh'), 'echo \'{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"look"}}\'');
    const engine = createHookEngine({
      hooks: [{ event: 'PreToolUse', matcher: 'Bash', command: `bash ${join(dir, 'ask.sh')}`, timeoutMs: 5000, file: 'ask.sh', fromWorkspace: false }],
      root: dir, runId: 'r', transcriptPath: () => '', env: { PATH: process.env.PATH! }, trust: null, notice: () => undefined,
    });
    const authorize = createAuthorizer({ ruleSet: shippedRules(), workspaceRoot: dir, getParticipant: (id) => (id === 'dev' ? dev : undefined) });
    for (const command of ['echo hi $(touch PWNED)', UNREADABLE[0]!]) {
      const verdict = authorize({ toolName: 'shell', input: { command }, participantId: 'dev', sessionId: 's', chain: ['user', 'dev'] });
      assert.equal(personOnly(verdict), true, command);
      const call = { sessionId: 's', participantId: 'dev', initiatorId: 'user', chain: ['user', 'dev'], toolName: 'shell', toolUseId: 't', input: { command } };
      const after = await engine.preToolUse(call, verdict, new AbortController().signal);
      assert.equal(after.decision, 'ask');
      assert.match(after.reason, /a PreToolUse hook asks: look/, 'the hook ran');
      assert.equal(personOnly(after), true, `${command}: the hook's ask must not hand it to triage or an agent`);
    }
  });
});
