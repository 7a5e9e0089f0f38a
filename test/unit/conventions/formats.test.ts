import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAgentFile } from '../../../src/conventions/agent-files';
import { matcherSelects } from '../../../src/conventions/hooks/tool-names';
import { foldersOf } from '../../../src/conventions/nested-instructions';
import { toolInput } from '../../../src/conventions/hooks/input';

const options = { toolExists: (n: string) => ['file_read', 'shell', 'communicator'].includes(n), reserved: new Set(['ur-agent']) };

test('approvalAuthority of an agent file counts only in the user\'s own folder', () => {
  const text = '---\nname: approver\ntools: [file_read]\napprovalAuthority: "*"\n---\nYou approve.\n';
  const user = parseAgentFile(text, '/home/u/.config/legion/agents/approver.md', false, options);
  const workspace = parseAgentFile(text, '/w/.legion/agents/approver.md', true, options);
  assert.ok(user.ok && workspace.ok);
  assert.equal(user.value.agent.approvalAuthority, '*');
  assert.deepEqual(workspace.value.agent.approvalAuthority, []);
});

test('agent file tools: a list or a comma string, Claude Code names mapped, Legion names kept, MCP names accepted, unknown ones left out', () => {
  const parsed = parseAgentFile('---\nname: a\ntools: "Bash, file_read, mcp__github__get_issue, NotebookEdit, Task"\n---\nP\n', 'a.md', true, options);
  assert.ok(parsed.ok);
  assert.deepEqual(parsed.value.agent.tools, ['shell', 'file_read', 'mcp__github__get_issue', 'communicator']);
  assert.ok(parsed.value.notes.includes('tools: NotebookEdit has no Legion equivalent (left out)'));
  const empty = parseAgentFile('---\nname: a\n---\n\n', 'a.md', true, options);
  assert.deepEqual(empty, { ok: false, error: 'a.md: the body (the agent\'s system prompt, after the front matter) is empty' });
  const noFront = parseAgentFile('name: a\n', 'a.md', true, options);
  assert.equal(noFront.ok, false);
});

test('hook matchers: Claude Code names and Legion names, alternatives, regular expressions, everything', () => {
  const write = ['file_write', 'Write'];
  assert.equal(matcherSelects('Write', write), true);
  assert.equal(matcherSelects('file_write', write), true);
  assert.equal(matcherSelects('Edit|Write', write), true);
  assert.equal(matcherSelects('Writ', write), false, 'whole names only');
  assert.equal(matcherSelects('Bash', write), false);
  assert.equal(matcherSelects('mcp__github__.*', ['mcp__github__get_issue']), true);
  assert.equal(matcherSelects(undefined, write), true);
  assert.equal(matcherSelects('', write), true);
  assert.equal(matcherSelects('*', write), true);
  assert.equal(matcherSelects('(', ['(']), true, 'an invalid expression is compared literally');
});

test('hook tool input: Claude Code field names beside Legion\'s, paths absolute', () => {
  assert.deepEqual(toolInput('file_edit', { path: 'a.ts', oldString: 'x', newString: 'y' }, '/w'), {
    tool_name: 'Edit', legion_tool_name: 'file_edit',
    tool_input: { path: 'a.ts', oldString: 'x', newString: 'y', file_path: '/w/a.ts', old_string: 'x', new_string: 'y' },
  });
  assert.deepEqual(toolInput('shell', { command: 'ls' }, '/w').tool_input, { command: 'ls' });
  assert.equal(toolInput('mcp__gh__x', {}, '/w').tool_name, 'mcp__gh__x');
});

test('nested instructions: the folders on the way to a path, never above the root', () => {
  assert.deepEqual(foldersOf('pkg/api/a.ts'), ['pkg', 'pkg/api', 'pkg/api/a.ts']);
  assert.deepEqual(foldersOf('./pkg/'), ['pkg']);
  assert.deepEqual(foldersOf('../x/y'), []);
  assert.deepEqual(foldersOf('/etc/passwd'), []);
  assert.deepEqual(foldersOf('.'), []);
});
