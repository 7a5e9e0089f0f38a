import '../../helpers/own-home';
import { test } from 'node:test';
import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { call, messagesText, say, systemOf, toolNames, withConventions } from '../../helpers/conventions-fixture';

/** Skills (docs/conventions.md#skills) against a fake Anthropic server. */

test('skills of the workspace, .claude/skills and the user are listed in the system prompt and loaded with the skill tool, inside their folder only', async () => {
  await withConventions(async (f) => {
    await f.write('.legion/skills/release-notes/SKILL.md', '---\nname: release-notes\ndescription: Write release notes from the git log. Use when asked for a changelog.\n---\n# Release notes\nrelease-body-marker: group by feature.\n');
    await f.write('.legion/skills/release-notes/reference.md', 'reference-marker\n');
    await f.write('.claude/skills/pdf/SKILL.md', '---\nname: pdf\ndescription: Fill PDF forms\n---\nUse pdftk.\n');
    await f.write('.claude/skills/broken/SKILL.md', '---\nname: broken\n---\nNo description.\n');
    await f.writeHome('.config/legion/skills/user-skill/SKILL.md', '---\nname: user-skill\ndescription: The user\'s own habit\n---\nuser-skill-body\n');
    await f.write('secret-outside.txt', 'outside-marker\n');
    await symlink(join(f.root, 'secret-outside.txt'), join(f.root, '.legion/skills/release-notes/link.txt'));
    f.server.enqueue(
      call('skill', { name: 'release-notes' }, 'toolu_1'),
      call('skill', { name: 'release-notes', file: 'reference.md' }, 'toolu_2'),
      call('skill', { name: 'release-notes', file: 'link.txt' }, 'toolu_3'),
      call('skill', { name: 'user-skill' }, 'toolu_4'),
      say('done'),
    );
    const result = await f.run(['run', 'write the release notes']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /broken\/SKILL\.md:\d+: description: missing/);
    const first = f.server.requests[0]!.body;
    assert.ok(toolNames(first).includes('skill'), 'ur-agent holds skill');
    assert.match(systemOf(first), /# Skills\n.*load the skill with the skill tool.*\n- release-notes: Write release notes from the git log\. Use when asked for a changelog\.\n- pdf: Fill PDF forms\n- user-skill: The user's own habit$/m);
    assert.doesNotMatch(systemOf(first), /release-body-marker|broken/);
    const seen = (i: number): string => messagesText(f.server.requests[i]!.body);
    assert.match(seen(1), /# Release notes\nrelease-body-marker: group by feature\.\n\n\[files of this skill, read with \{"name": "release-notes", "file": …\}: reference\.md\]/);
    assert.match(seen(2), /reference-marker/);
    assert.match(seen(3), /link\.txt: outside the skill's folder/);
    assert.doesNotMatch(seen(3), /outside-marker/);
    assert.match(seen(4), /user-skill-body/);
  });
});

test('an agent without the skill tool sees the list and is told it cannot load them; a new skill is listed at the next request', async () => {
  await withConventions(async (f) => {
    await f.write('.legion/agents/reader.md', '---\nname: reader\ndescription: reads\ntools: Read\n---\nYou read.\n');
    await f.write('.legion/skills/one/SKILL.md', '---\ndescription: The first skill\n---\nbody\n');
    f.server.enqueue(call('file_read', { path: '.legion/agents/reader.md' }), say('read'));
    const result = await f.run(['run', '--to', 'reader', 'read']);
    assert.equal(result.code, 0, result.stderr);
    const system = systemOf(f.server.requests[0]!.body);
    assert.match(system, /You do not hold the skill tool/);
    assert.match(system, /- one: The first skill/);
    assert.ok(!toolNames(f.server.requests[0]!.body).includes('skill'));
    await f.write('.legion/skills/two/SKILL.md', '---\nname: two\ndescription: The second skill\n---\nbody\n');
    f.server.enqueue(say('ok'));
    await f.run(['run', '--to', 'reader', 'again']);
    assert.match(systemOf(f.server.requests[2]!.body), /- two: The second skill/);
  });
});
