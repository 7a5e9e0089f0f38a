import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { symlink, writeFile } from 'node:fs/promises';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, messagesText, say, systemOf, withConventions } from '../../helpers/conventions-fixture';

/**
 * Project instructions (docs/conventions.md#project-instructions) against a fake Anthropic
 * server: the workspace's AGENTS.md and the user's in every agent's system prompt (a shipped
 * agent and one spawned during the run), a change reaching the next request, a nested
 * AGENTS.md joining the conversation once, the cap, and files that must not be read.
 */

test('AGENTS.md of the workspace and of the user are in the system prompt of a shipped and of a spawned agent; an edit reaches the next request', async () => {
  let seen = 0;
  let agentsFile = '';
  await withConventions(async (f) => {
    agentsFile = join(f.root, 'AGENTS.md');
    await f.write('AGENTS.md', 'Build with `make root-marker-1`.\n');
    await f.write('CLAUDE.md', 'claude-marker: only read when there is no AGENTS.md\n');
    await f.writeHome('.config/legion/AGENTS.md', 'user-marker: answer in English.\n');
    f.server.enqueue(
      call('spawn_agent', { id: 'helper', name: 'Helper', systemPrompt: 'You are helper-prompt.' }),
      call('communicator', { targetId: 'helper', message: 'say hello' }),
      say('hello from helper'),
      say('done'),
    );
    const result = await f.run(['run', '--approve', 'all', '--to', 'resource-agent', 'make a helper and ask it']);
    assert.equal(result.code, 0, result.stderr);
    const systems = f.server.requests.map((r) => systemOf(r.body));
    assert.equal(systems.length, 4);
    assert.match(systems[1]!, /root-marker-1/);
    assert.match(systems[0]!, /# Instructions from the workspace \(.*AGENTS\.md\)\nBuild with `make root-marker-1`\./);
    assert.match(systems[0]!, /# Instructions from your user configuration \(.*\.config\/legion\/AGENTS\.md\)\nuser-marker/);
    assert.doesNotMatch(systems[0]!, /claude-marker/);
    // The spawned agent's request: its own prompt and the instructions, changed on disk just before it.
    assert.match(systems[2]!, /^You are helper-prompt\./);
    assert.match(systems[2]!, /root-marker-2/);
    assert.doesNotMatch(systems[2]!, /root-marker-1/);
    assert.match(systems[2]!, /user-marker/);
    assert.match(systems[3]!, /root-marker-2/);

    // ur-agent, in a later process: the current file.
    f.server.enqueue(say('hi'));
    const again = await f.run(['run', 'hello']);
    assert.equal(again.code, 0, again.stderr);
    const last = systemOf(f.server.requests[4]!.body);
    assert.match(last, /^You are ur-agent/);
    assert.match(last, /root-marker-2/);
    assert.match(last, /user-marker/);
  }, () => {
    // While the second request is answered (before the helper's is built), the file changes.
    if (seen++ === 1) writeFileSync(agentsFile, 'Build with `make root-marker-2`.\n');
    return undefined;
  });
});

test('without AGENTS.md, CLAUDE.md is read; instructions.files changes the list; a file over 32 kB is cut with a notice', async () => {
  await withConventions(async (f) => {
    await f.write('CLAUDE.md', 'claude-marker\n' + 'x'.repeat(40 * 1024) + '\nTAIL-MARKER\n');
    f.server.enqueue(say('ok'));
    const result = await f.run(['run', 'hi']);
    assert.equal(result.code, 0, result.stderr);
    const system = systemOf(f.server.requests[0]!.body);
    assert.match(system, /# Instructions from the workspace \(.*CLAUDE\.md\)\nclaude-marker/);
    assert.doesNotMatch(system, /TAIL-MARKER/);
    assert.match(system, /\[cut: .*CLAUDE\.md is 4\d{4} bytes; only the first 32768 are included\]/);
    assert.ok(system.length < 34 * 1024, `system prompt of ${system.length} characters`);
    assert.match(result.stderr, /CLAUDE\.md is 4\d{4} bytes: only its first 32768 bytes/);

    await f.write('.legion/config.yaml', 'instructions:\n  files: [docs/AGENT-GUIDE.md]\n');
    await f.write('docs/AGENT-GUIDE.md', 'guide-marker\n');
    f.server.enqueue(say('ok'));
    const second = await f.run(['run', 'hi']);
    assert.equal(second.code, 0, second.stderr);
    const next = systemOf(f.server.requests[1]!.body);
    assert.match(next, /guide-marker/);
    assert.doesNotMatch(next, /claude-marker/);
  });
});

test('an AGENTS.md that links out of the workspace, or a configured secret path, is never read into a prompt', async () => {
  await withConventions(async (f) => {
    await writeFile(join(f.home, 'private.txt'), 'PRIVATE-KEY-MATERIAL\n');
    await symlink(join(f.home, 'private.txt'), join(f.root, 'AGENTS.md'));
    await f.write('.env', 'API_TOKEN=ENV-SECRET-VALUE\n');
    f.server.enqueue(say('ok'));
    const result = await f.run(['run', 'hi']);
    assert.equal(result.code, 0, result.stderr);
    const system = systemOf(f.server.requests[0]!.body);
    assert.doesNotMatch(system, /PRIVATE-KEY-MATERIAL/);
    assert.match(result.stderr, /AGENTS\.md: not included in the agents' instructions: a symbolic link leading out of the workspace/);

    await f.write('.legion/config.yaml', 'instructions:\n  files: [.env]\n');
    f.server.enqueue(say('ok'));
    const second = await f.run(['run', 'hi']);
    assert.equal(second.code, 0, second.stderr);
    assert.doesNotMatch(systemOf(f.server.requests[1]!.body), /ENV-SECRET-VALUE/);
    assert.match(second.stderr, /\.env: not included .*a secret path/);
  });
});

test('a nested AGENTS.md joins the conversation once, when the file tools first touch its folder', async () => {
  await withConventions(async (f) => {
    await f.write('pkg/api/AGENTS.md', 'api-marker: run `npm test -w api`.\n');
    await f.write('pkg/api/a.txt', 'alpha\n');
    await f.write('pkg/api/b.txt', 'beta\n');
    await f.write('other/c.txt', 'gamma\n');
    f.server.enqueue(
      call('file_read', { path: 'other/c.txt' }, 'toolu_1'),
      call('file_read', { path: 'pkg/api/a.txt' }, 'toolu_2'),
      call('file_read', { path: 'pkg/api/b.txt' }, 'toolu_3'),
      say('done'),
    );
    const result = await f.run(['run', '--to', 'resource-agent', 'read them']);
    assert.equal(result.code, 0, result.stderr);
    const texts = f.server.requests.map((r) => messagesText(r.body));
    assert.doesNotMatch(texts[1]!, /api-marker/);
    assert.match(texts[2]!, /Instructions for the folder pkg\/api\/ \(pkg\/api\/AGENTS\.md\); they apply to files under pkg\/api\/:\napi-marker/);
    assert.equal(texts[3]!.split('api-marker').length - 1, 1, 'given once');
    assert.doesNotMatch(systemOf(f.server.requests[0]!.body), /api-marker/);
  });
});
