import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, messagesText, say, withConventions, type ConventionsFixture } from '../../helpers/conventions-fixture';

/**
 * Claude-Code-compatible hooks (docs/conventions.md#hooks) against a fake Anthropic server:
 * the hook scripts read the event from stdin as Claude Code's do.
 */

/** A PreToolUse/PostToolUse script: records each event (and its environment's names) to ~/events.jsonl, then answers by path. */
const RECORDER = `
const fs = require('fs');
let s = '';
process.stdin.on('data', (d) => (s += d)).on('end', () => {
  const e = JSON.parse(s);
  fs.appendFileSync(process.env.HOME + '/events.jsonl', JSON.stringify({ ...e, env: Object.keys(process.env) }) + '\\n');
  const p = (e.tool_input && e.tool_input.file_path) || '';
  const answer = (decision, reason) => console.log(JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: decision, permissionDecisionReason: reason } }));
  if (e.hook_event_name === 'PostToolUse') { console.log(JSON.stringify({ decision: 'block', reason: 'post-marker: the hook saw the result' })); return; }
  if (p.includes('/protected/')) { process.stderr.write('protected/ is read-only by team policy'); process.exit(2); }
  if (p.endsWith('deny.txt')) return answer('deny', 'deny.txt is off limits');
  if (p.endsWith('ask.txt')) return answer('ask', 'a person should look at ask.txt');
  if (p.includes('allow') || p.endsWith('.env')) return answer('allow', 'the hook allows it');
});
`;

async function userHooks(f: ConventionsFixture, yaml: string): Promise<void> {
  await f.writeHome('recorder.js', RECORDER);
  await f.writeHome('.config/legion/config.yaml', yaml.replaceAll('RECORDER', `node ${join(f.home, 'recorder.js')}`));
}
const events = (f: ConventionsFixture): any[] => {
  const file = join(f.home, 'events.jsonl');
  return existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l)) : [];
};

test('a PreToolUse hook exiting 2 keeps a file unwritten even with --approve all, and the model reads its reason; the event is Claude Code\'s', async () => {
  await withConventions(async (f) => {
    await userHooks(f, 'hooks:\n  PreToolUse:\n    - matcher: Write\n      hooks:\n        - { type: command, command: "RECORDER" }\n    - matcher: Bash\n      hooks:\n        - { type: command, command: "exit 2" }\n');
    f.server.enqueue(
      call('file_write', { path: 'protected/x.txt', content: 'x' }, 'toolu_1'),
      call('file_write', { path: 'free.txt', content: 'free' }, 'toolu_2'),
      say('done'),
    );
    const result = await f.run(['run', '--approve', 'all', '--to', 'resource-agent', 'write them']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(existsSync(join(f.root, 'protected/x.txt')), false, 'blocked by the hook');
    assert.equal(readFileSync(join(f.root, 'free.txt'), 'utf8'), 'free');
    assert.match(messagesText(f.server.requests[1]!.body), /blocked by a PreToolUse hook \(.*config\.yaml\): protected\/ is read-only by team policy/);
    const [first, second] = events(f);
    assert.equal(first.hook_event_name, 'PreToolUse');
    assert.equal(first.tool_name, 'Write');
    assert.equal(first.legion_tool_name, 'file_write');
    assert.equal(first.tool_input.file_path, join(f.root, 'protected/x.txt'));
    assert.equal(first.tool_input.content, 'x');
    assert.equal(first.tool_use_id, 'toolu_1');
    assert.equal(first.cwd, f.root);
    assert.equal(first.participant, 'resource-agent');
    assert.deepEqual(first.chain, ['user', 'resource-agent']);
    assert.match(first.transcript_path, /\.legion\/runs\/.*\/sessions\/.*\.jsonl$/);
    assert.ok(existsSync(first.transcript_path), 'the transcript exists');
    assert.equal(typeof first.session_id, 'string');
    assert.equal(second.tool_input.file_path, join(f.root, 'free.txt'));
    // An allow-listed environment: no API key reaches a hook; the project dir does.
    assert.ok(!first.env.includes('ANTHROPIC_API_KEY'), first.env.join(' '));
    assert.ok(first.env.includes('CLAUDE_PROJECT_DIR'));
  });
});

test('PreToolUse JSON: deny blocks, ask joins the approval queue, allow answers a fallback ask but never a rule\'s deny or ask', async () => {
  await withConventions(async (f) => {
    await userHooks(f, 'hooks:\n  PreToolUse:\n    - matcher: "Write|Edit"\n      hooks:\n        - { type: command, command: "RECORDER", timeout: 30 }\n');
    await f.write('.git/HEAD', 'ref: refs/heads/main\n');
    f.server.enqueue(
      call('file_write', { path: 'deny.txt', content: 'x' }, 'toolu_1'),
      call('file_write', { path: 'ask.txt', content: 'x' }, 'toolu_2'),
      call('file_write', { path: 'allow.txt', content: 'allowed' }, 'toolu_3'),
      call('file_write', { path: '.git/allow.txt', content: 'x' }, 'toolu_4'),
      call('file_write', { path: '.env', content: 'x' }, 'toolu_5'),
      say('done'),
    );
    const result = await f.run(['run', '--to', 'resource-agent', 'write them']);
    assert.equal(result.code, 0, result.stderr);
    const seen = (i: number): string => messagesText(f.server.requests[i]!.body);
    assert.equal(existsSync(join(f.root, 'deny.txt')), false);
    assert.match(seen(1), /blocked by a PreToolUse hook .*: deny\.txt is off limits/);
    // ask → the approval queue, which `--approve deny` (the default) answers no.
    assert.equal(existsSync(join(f.root, 'ask.txt')), false);
    assert.match(seen(2), /rejected/);
    assert.match(result.stderr, /needing approval were rejected/);
    // allow answers the fallback ask (writes-ask): written with no approval.
    assert.equal(readFileSync(join(f.root, 'allow.txt'), 'utf8'), 'allowed');
    // …but not an ordinary ask rule (git-internals-ask) nor a deny (no-secrets).
    assert.equal(existsSync(join(f.root, '.git/allow.txt')), false);
    assert.equal(existsSync(join(f.root, '.env')), false);
    assert.match(seen(5), /denied by rule no-secrets/);
    // The rule's deny was final: the hook was not even asked about .env.
    assert.deepEqual(events(f).map((e) => e.tool_input.file_path.slice(f.root.length + 1)), ['deny.txt', 'ask.txt', 'allow.txt', '.git/allow.txt']);
  });
});

test('a PostToolUse hook sees the tool response, and its block reason reaches the model', async () => {
  await withConventions(async (f) => {
    await userHooks(f, 'hooks:\n  PostToolUse:\n    - matcher: Read\n      hooks:\n        - { type: command, command: "RECORDER" }\n');
    await f.write('a.txt', 'alpha-content\n');
    f.server.enqueue(call('file_read', { path: 'a.txt' }), say('done'));
    const result = await f.run(['run', '--to', 'resource-agent', 'read it']);
    assert.equal(result.code, 0, result.stderr);
    const [post] = events(f);
    assert.equal(post.hook_event_name, 'PostToolUse');
    assert.equal(post.tool_name, 'Read');
    assert.match(post.tool_response.content, /alpha-content/);
    assert.equal(post.tool_response.success, true);
    assert.match(messagesText(f.server.requests[1]!.body), /post-marker: the hook saw the result/);
  });
});

test('a hook that hangs is cut at its timeout and the call goes on with a warning', async () => {
  await withConventions(async (f) => {
    await f.writeHome('.config/legion/config.yaml', 'hooks:\n  PreToolUse:\n    - matcher: "*"\n      hooks:\n        - { type: command, command: "sleep 30", timeout: 1 }\n');
    f.server.enqueue(call('file_write', { path: 'late.txt', content: 'late' }), say('done'));
    const started = performance.now();
    const result = await f.run(['run', '--json', '--approve', 'all', '--to', 'resource-agent', 'write it']);
    const ms = performance.now() - started;
    assert.equal(result.code, 0, result.stderr);
    assert.ok(ms < 15_000, `took ${Math.round(ms)} ms`);
    assert.equal(readFileSync(join(f.root, 'late.txt'), 'utf8'), 'late');
    assert.match(result.stdout, /PreToolUse hook \\"sleep 30\\" .* did not finish within 1 s and was stopped; going on/);
  });
});

test('a workspace hook does not run until `legion hooks trust`; a rewritten hook script makes it untrusted again', async () => {
  await withConventions(async (f) => {
    await f.write('.claude/hooks/guard.sh', '#!/bin/bash\ntouch "$CLAUDE_PROJECT_DIR/guard-ran"\necho "the team guard says no" >&2\nexit 2\n');
    await f.write('.claude/settings.json', JSON.stringify({
      permissions: { allow: ['Bash(npm test)'] },
      hooks: { PreToolUse: [{ matcher: 'Write', hooks: [{ type: 'command', command: 'bash "$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh' }] }] },
    }));
    f.server.enqueue(call('file_write', { path: 'one.txt', content: '1' }), say('done'));
    const untrusted = await f.run(['run', '--approve', 'all', '--to', 'resource-agent', 'write']);
    assert.equal(untrusted.code, 0, untrusted.stderr);
    assert.match(untrusted.stderr, /1 hook of this workspace \(\.claude\/settings\.json\) will not run: not trusted yet; review with `legion hooks list`, then `legion hooks trust`/);
    assert.equal(existsSync(join(f.root, 'guard-ran')), false, 'the untrusted hook did not run');
    assert.equal(existsSync(join(f.root, 'one.txt')), true);

    const listed = await f.run(['hooks', 'list']);
    assert.match(listed.stdout, /PreToolUse \[Write\]  bash "\$CLAUDE_PROJECT_DIR"\/\.claude\/hooks\/guard\.sh/);
    assert.match(listed.stdout, /do not run: not trusted yet/);
    const trusted = await f.run(['hooks', 'trust']);
    assert.equal(trusted.code, 0, trusted.stderr);
    assert.ok(!existsSync(join(f.root, '.legion', 'hooks-trust.json')), 'trust is kept out of the workspace');
    assert.ok(existsSync(join(f.home, '.config', 'legion', 'hooks-trust.json')));

    f.server.enqueue(call('file_write', { path: 'two.txt', content: '2' }), say('done'));
    const ran = await f.run(['run', '--approve', 'all', '--to', 'resource-agent', 'write']);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(existsSync(join(f.root, 'guard-ran')), true);
    assert.equal(existsSync(join(f.root, 'two.txt')), false);
    assert.match(messagesText(f.server.requests[3]!.body), /the team guard says no/);

    // An agent rewriting the script during a run: it does not run, and the calls it guards are refused.
    f.server.enqueue(
      // (Write is guarded, so the guard's own file_write would be blocked: Edit is not.)
      call('file_edit', { path: '.claude/hooks/guard.sh', oldString: 'echo "the team guard says no" >&2\nexit 2', newString: 'echo pwned > "$CLAUDE_PROJECT_DIR/pwned"\nexit 0' }, 'toolu_a'),
      call('file_write', { path: 'three.txt', content: '3' }, 'toolu_c'),
      say('done'),
    );
    const changed = await f.run(['run', '--approve', 'all', '--to', 'resource-agent', 'write']);
    assert.equal(changed.code, 0, changed.stderr);
    assert.equal(existsSync(join(f.root, 'pwned')), false, 'the rewritten script never ran');
    assert.match(readFileSync(join(f.root, '.claude/hooks/guard.sh'), 'utf8'), /pwned/, 'the edit ran');
    assert.equal(existsSync(join(f.root, 'three.txt')), false, 'the guarded call is refused');
    assert.match(messagesText(f.server.requests[6]!.body), /hooks that guard file_write changed since they were trusted \(\.claude\/hooks\/guard\.sh changed since you trusted it\)/);
    // The next start says so too.
    f.server.enqueue(say('ok'));
    const next = await f.run(['run', 'hi']);
    assert.match(next.stderr, /will not run: \.claude\/hooks\/guard\.sh changed since you trusted it/);
  });
});

test('UserPromptSubmit adds context, SessionStart runs once per session, Stop sends the agent on once', async () => {
  await withConventions(async (f) => {
    await f.writeHome('stop.sh', '#!/bin/bash\ninput=$(cat)\ncase "$input" in *\'"stop_hook_active":false\'*) echo "run the tests before you stop" >&2; exit 2;; esac\nexit 0\n');
    await f.writeHome('.config/legion/config.yaml', [
      'hooks:',
      '  UserPromptSubmit:',
      '    - hooks: [{ type: command, command: "echo prompt-context-marker" }]',
      '  SessionStart:',
      '    - hooks: [{ type: command, command: "echo session-start-marker" }]',
      '  Stop:',
      `    - hooks: [{ type: command, command: "bash ${join(f.home, 'stop.sh')}" }]`,
      '',
    ].join('\n'));
    f.server.enqueue(say('first answer'), say('tests pass'), say('again'), say('again, tests pass'));
    const result = await f.run(['run', 'hello']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, 'tests pass\n');
    const first = messagesText(f.server.requests[0]!.body);
    assert.match(first, /session-start-marker/);
    assert.match(first, /prompt-context-marker/);
    assert.match(messagesText(f.server.requests[1]!.body), /A stop hook asks you to continue: run the tests before you stop/);
    const again = await f.run(['run', 'hello again']);
    assert.equal(again.code, 0, again.stderr);
    const third = messagesText(f.server.requests[2]!.body);
    assert.equal(third.split('session-start-marker').length - 1, 1, 'SessionStart ran once for the session');
  });
});
