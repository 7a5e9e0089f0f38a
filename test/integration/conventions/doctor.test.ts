import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withConventions } from '../../helpers/conventions-fixture';

/** `legion doctor` lists what it found of AGENTS.md, hooks, agent files and skills (docs/conventions.md). */

test('legion doctor lists the instructions files, the hooks and their trust, the agent files and the skills, with a fix for each problem', async () => {
  await withConventions(async (f) => {
    const quiet = await f.run(['doctor', '--json']);
    const none = JSON.parse(quiet.stdout) as { checks: { name: string; ok: boolean; detail: string }[] };
    const byName = (checks: typeof none.checks, name: string) => checks.filter((c) => c.name === name);
    assert.match(byName(none.checks, 'instructions')[0]!.detail, /^instructions: none/);
    assert.deepEqual(byName(none.checks, 'hooks').map((c) => c.ok), [true]);

    await f.write('AGENTS.md', 'build with make\n');
    await f.writeHome('.config/legion/AGENTS.md', 'mine\n');
    await f.write('.claude/settings.json', JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'true' }] }], SessionEnd: [] } }));
    await f.writeHome('.config/legion/config.yaml', 'hooks:\n  Stop:\n    - hooks: [{ type: command, command: "true" }]\n');
    await f.write('.legion/agents/reviewer.md', '---\nname: reviewer\ndescription: reviews\ntools: Read\n---\nYou review.\n');
    await f.write('.legion/agents/bad.md', '---\nname: Bad\n---\nx\n');
    await f.write('.claude/skills/pdf/SKILL.md', '---\nname: pdf\ndescription: PDFs\n---\nUse pdftk.\n');
    const result = await f.run(['doctor']);
    assert.equal(result.code, 1);
    const out = result.stdout;
    assert.match(out, /✓ instructions: AGENTS\.md, .*\.config\/legion\/AGENTS\.md\n/);
    assert.match(out, /✗ hooks: .*\.claude\/settings\.json: hooks\.SessionEnd: Legion does not run this event/);
    assert.match(out, /✗ hooks: Stop ×1, PreToolUse ×1; the workspace's 1 do not run \(not trusted yet\)\n    fix: read them with `legion hooks list`/);
    assert.match(out, /✗ agent files: reviewer \(\.legion\/agents\/reviewer\.md\); .*bad\.md:2: name: an id is/);
    assert.match(out, /✓ skills: pdf\n/);

    await f.run(['hooks', 'trust']);
    const trusted = await f.run(['doctor']);
    assert.match(trusted.stdout, /✓ hooks: Stop ×1, PreToolUse ×1; the workspace's 1 trusted\n/);
  });
});
