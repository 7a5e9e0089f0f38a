import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, messagesText, say, systemOf, toolNames, withConventions } from '../../helpers/conventions-fixture';

/** Agent files (docs/conventions.md#agent-files) against a fake Anthropic server. */

const REVIEWER = `---
name: reviewer
description: Reviews code for bugs. Use after changes.
tools: Read, Grep, Glob
model: sonnet
color: purple
---
You are reviewer-prompt-marker. Read the code and report bugs.
`;

test('an agent file is a participant: it answers with its prompt and only its tools, and others find and delegate to it', async () => {
  await withConventions(async (f) => {
    await f.write('.legion/agents/reviewer.md', REVIEWER);
    f.server.enqueue(say('no bugs found'));
    const direct = await f.run(['run', '--to', 'reviewer', 'review src/']);
    assert.equal(direct.code, 0, direct.stderr);
    assert.equal(direct.stdout, 'no bugs found\n');
    const body = f.server.requests[0]!.body;
    assert.match(systemOf(body), /^You are reviewer-prompt-marker\. Read the code and report bugs\.\n\n# Context\nYou are "reviewer"/);
    assert.deepEqual(toolNames(body).filter((n) => n !== 'recall').sort(), ['file_read', 'glob', 'grep']);
    // The run's model stands in for Claude Code's alias.
    assert.notEqual(body.model, 'sonnet');

    f.server.enqueue(
      call('list_participants', {}),
      call('communicator', { targetId: 'reviewer', message: 'review please' }),
      say('looks fine'),
      say('the reviewer says it looks fine'),
    );
    const delegated = await f.run(['run', 'get the code reviewed']);
    assert.equal(delegated.code, 0, delegated.stderr);
    assert.match(messagesText(f.server.requests[2]!.body), /reviewer.*Reviews code for bugs/s);
    assert.match(systemOf(f.server.requests[3]!.body), /^You are reviewer-prompt-marker/);
    assert.equal(delegated.stdout, 'the reviewer says it looks fine\n');
  });
});

test('a bad agent file is one line naming the file and the field; the others load', async () => {
  await withConventions(async (f) => {
    await f.write('.legion/agents/bad-tools.md', '---\nname: broken\ndescription: x\ntools: 5\n---\nPrompt.\n');
    await f.write('.legion/agents/bad-name.md', '---\nname: Bad Name\n---\nPrompt.\n');
    await f.write('.legion/agents/ur.md', '---\nname: ur-agent\n---\nI am the new boss.\n');
    await f.write('.legion/agents/reviewer.md', REVIEWER);
    f.server.enqueue(say('ok'));
    const result = await f.run(['run', '--to', 'reviewer', 'hi']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /bad-tools\.md:4: tools: must be a list of tool names or a comma-separated string\n/);
    assert.match(result.stderr, /bad-name\.md:2: name: an id is 1–63 lowercase letters/);
    assert.match(result.stderr, /ur\.md:2: name: "ur-agent" is one of Legion's own participants/);
    f.server.enqueue(say('hello'));
    const ur = await f.run(['run', 'hi']);
    assert.match(systemOf(f.server.requests[1]!.body), /^You are ur-agent/, 'a file cannot replace a shipped participant');
    assert.equal(ur.code, 0);
  });
});

test('legion agents import copies Claude Code subagents and reports what it mapped; the imported agent runs', async () => {
  await withConventions(async (f) => {
    await f.write('.claude/agents/reviewer.md', REVIEWER);
    await f.write('.claude/agents/researcher.md', '---\nname: researcher\ndescription: Finds things on the web\ntools: WebFetch, Read, Bash\napprovalAuthority: "*"\n---\nYou research.\n');
    const result = await f.run(['agents', 'import', '.claude/agents']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /imported reviewer → \.legion\/agents\/reviewer\.md\n  tools: Read → file_read\n  tools: Grep → grep\n  tools: Glob → glob\n  model: sonnet \(a Claude Code alias\) → the run's model\n/);
    assert.match(result.stdout, /imported researcher[^\n]*\n  tools: WebFetch has no Legion equivalent \(left out\)\n  tools: Read → file_read\n  tools: Bash → shell\n  approvalAuthority: ignored in a workspace agent file/);
    assert.equal(readFileSync(join(f.root, '.legion/agents/reviewer.md'), 'utf8'), REVIEWER);
    assert.ok(existsSync(join(f.root, '.legion/agents/researcher.md')));

    f.server.enqueue(say('researched'));
    const run = await f.run(['run', '--to', 'researcher', 'look it up']);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(toolNames(f.server.requests[0]!.body).filter((n) => n !== 'recall').sort(), ['file_read', 'shell']);

    const listed = await f.run(['agents', 'list']);
    assert.match(listed.stdout, /researcher  \.legion\/agents\/researcher\.md  tools: file_read, shell/);
    // Importing again over a changed file needs --force.
    await f.write('.legion/agents/reviewer.md', REVIEWER.replace('Reviews', 'Checks'));
    const again = await f.run(['agents', 'import', '.claude/agents']);
    assert.equal(again.code, 1);
    assert.match(again.stdout, /skipped reviewer\.md: \.legion\/agents\/reviewer\.md exists and differs \(--force replaces it\)/);
  });
});
