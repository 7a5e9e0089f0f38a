import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { makeSandbox, makeToolContext } from '../../helpers/tool-context';
import { createGrepTool } from '../../../src/tools/builtin/grep';
import { executeTool } from '../../../src/tools/execute-tool';
import { createAuthorizer } from '../../../src/authz/authorizer';
import { secretPathMatcher } from '../../../src/tools/sandbox/secrets';
import { secretPatternsOf } from '../../../src/cli/compose-sandbox';
import { rulesFrom, SHIPPED_RULES } from '../../helpers/rules';
import { readFileSync } from 'node:fs';

// The shipped rules deny reading `.env`, private keys and credential files ("Secrets … stay out of
// agent context"), and allow grep everywhere. A grep of the whole workspace read them anyway: each
// file met in a folder was searched, its matching lines printed. A secret path is skipped.
const FILES: Record<string, string> = {
  '.env': 'API_KEY=sk-live-123456\n',
  'deploy/server.pem': '-----BEGIN PRIVATE KEY-----\nMIIsecret\n',
  'config/credentials.json': '{"token":"ghp_secret"}\n',
  'private/plan.txt': 'TOKEN my own secret folder\n',
  'src/a.ts': 'const KEY = "not a secret";\n',
};
const DEV = { id: 'dev', kind: 'agent' as const, name: 'dev', description: '', status: 'active' as const, systemPrompt: 'x', provider: 'default', model: 'default', tools: ['grep', 'file_read'], toolAuthorizations: {}, approvalAuthority: [] as string[] };

test('grep of the workspace, allowed without asking, prints no line of a file the rules deny reading', async () => {
  const sb = await makeSandbox();
  try {
    for (const [rel, content] of Object.entries(FILES)) {
      await mkdir(dirname(join(sb.root, rel)), { recursive: true });
      await writeFile(join(sb.root, rel), content);
    }
    // Your own file_read deny counts as a secret path too.
    const ruleSet = rulesFrom(readFileSync(SHIPPED_RULES, 'utf8'), 'version: 1\nrules:\n  - { id: my-private, decision: deny, tool: file_read, match: { path: "private/**" } }\n');
    const authorize = createAuthorizer({ gitConfigPaths: () => [], ruleSet, workspaceRoot: sb.root, getParticipant: (id) => (id === 'dev' ? DEV : undefined) });
    const input = { pattern: 'KEY|TOKEN|token|MII' };
    const call = (toolName: string, i: unknown) => authorize({ toolName, input: i, participantId: 'dev', sessionId: 's', chain: ['user', 'dev'] }).decision;
    assert.equal(call('grep', input), 'allow');
    assert.equal(call('file_read', { path: '.env' }), 'deny');
    assert.equal(call('file_read', { path: 'private/plan.txt' }), 'deny');
    const grep = createGrepTool({ secretPath: secretPathMatcher(secretPatternsOf(ruleSet)) });
    const r = await executeTool(grep, input, makeToolContext(sb.root));
    assert.match(r.content, /src\/a\.ts:1: const KEY/);
    assert.doesNotMatch(r.content, /sk-live|MIIsecret|ghp_secret|my own secret/);
    assert.match(r.content, /4 secret files skipped \(the rules deny reading them\)/);
  } finally {
    await sb.cleanup();
  }
});
