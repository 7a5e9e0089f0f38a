import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from '../../helpers/cli';
import { withTempDir } from '../../helpers/tmp';
import { APP_DIR } from '../../helpers/app-harness';
import { bundlePath, ensureBundle } from '../../helpers/bundle';
import { sse, startVendorServer } from '../../helpers/vendor-server';
import { anthropicStream } from '../../helpers/vendor-streams';
import type { LegionEvent } from '../../../src/events/types';

/** `legion run --workflow` and `legion workflows` end to end through main() (docs/workflows.md, "CLI"). */

const SCRIPT = `
version: 1
model: claude-sonnet-4-5
replies:
  - { agent: ur-agent, when: "^outline", text: "OUTLINE[{{lastText}}]", repeat: true }
  - { agent: ur-agent, when: "^write", text: "TEXT[{{lastText}}]", repeat: true }
  - { agent: ur-agent, when: "^explode", text: "x", error: { message: "503 overloaded", status: 503 }, repeat: true }
  - { agent: ur-agent, when: "^pricey", text: "done", usage: { inputTokens: 200000, outputTokens: 1000 }, repeat: true }
`;

const DOC = `description: outline then write
inputs:
  tone: { default: plain }
steps:
  - { id: outline, agent: ur-agent, prompt: "outline {{input}} ({{inputs.tone}})" }
  - { id: write, agent: ur-agent, after: [outline], prompt: "write {{steps.outline.output}}" }
`;

async function workspace(dir: string, workflows: Record<string, string>): Promise<Record<string, string>> {
  await writeFile(join(dir, 'script.yaml'), SCRIPT);
  await mkdir(join(dir, '.legion', 'workflows'), { recursive: true, mode: 0o700 });
  for (const [name, text] of Object.entries(workflows)) await writeFile(join(dir, '.legion', 'workflows', `${name}.yaml`), text, { mode: 0o600 });
  return { HOME: dir, LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: join(dir, 'script.yaml') };
}

const run = (argv: string[], dir: string, env: Record<string, string>) => runCli(argv, { cwd: dir, env, appDir: APP_DIR });

test('legion run --workflow prints the last step\'s output; --input fills an input; --json prints the workflow events', async () => {
  await withTempDir(async (dir) => {
    const env = await workspace(dir, { doc: DOC });
    const first = await run(['run', '--workflow', 'doc', '--input', 'tone=dry', 'the', 'release', 'notes'], dir, env);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout, 'TEXT[write OUTLINE[outline the release notes (dry)]]\n');

    const second = await run(['run', '--workflow', 'doc', '--json', 'notes'], dir, env);
    assert.equal(second.code, 0, second.stderr);
    const events = second.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as LegionEvent);
    const kinds = events.filter((e) => e.type.startsWith('workflow')).map((e) => (e.type === 'workflow-step-start' || e.type === 'workflow-step-end' ? `${e.type}:${e.stepId}` : e.type));
    assert.deepEqual(kinds, ['workflow-start', 'workflow-step-start:outline', 'workflow-step-end:outline', 'workflow-step-start:write', 'workflow-step-end:write', 'workflow-end']);
    const end = events.find((e) => e.type === 'workflow-end');
    assert.ok(end && end.type === 'workflow-end');
    assert.deepEqual([end.status, end.workflowId], ['done', 'doc-2']);
    assert.ok(events.some((e) => e.type === 'workflow-step-start' && e.sessionId === 'session-user__ur-agent__doc-outline'));
  });
});

test('legion run --workflow: a failed step is named on stderr with its dependants (exit 3); a reached budget exits 5', async () => {
  await withTempDir(async (dir) => {
    const env = await workspace(dir, {
      broken: `steps:\n  - { id: a, agent: ur-agent, prompt: "explode" }\n  - { id: b, agent: ur-agent, after: [a], prompt: "write {{steps.a.output}}" }\n`,
      capped: `budgetUsd: 0.1\nsteps:\n  - { id: a, agent: ur-agent, prompt: "pricey" }\n  - { id: b, agent: ur-agent, after: [a], prompt: "write" }\n`,
    });
    const failed = await run(['run', '--workflow', 'broken'], dir, env);
    assert.equal(failed.code, 3, failed.stderr);
    assert.equal(failed.stdout, '');
    assert.match(failed.stderr, /^legion: workflow broken: step a failed: .*503 overloaded/m);
    assert.match(failed.stderr, /^legion: workflow broken: not run: b$/m);

    const capped = await run(['run', '--workflow', 'capped'], dir, env);
    assert.equal(capped.code, 5, capped.stderr);
    assert.match(capped.stderr, /^legion: budget reached: workflow capped spent \$0\.\d+ of its \$0\.10 budgetUsd/m);
  });
});

test('legion run --workflow: usage and configuration errors are one line', async () => {
  await withTempDir(async (dir) => {
    const env = await workspace(dir, { doc: DOC, bad: `steps:\n  - { id: a, agent: ghost, prompt: p }\n` });
    const cases: [string[], number, RegExp][] = [
      [['run', '--workflow', 'nope', 'x'], 1, /^legion: no workflow "nope"/],
      [['run', '--workflow', 'bad', 'x'], 1, /bad\.yaml:2: step a: unknown agent "ghost"/],
      [['run', '--workflow', 'doc', '--input', 'tone', 'x'], 2, /--input takes name=value, not "tone"/],
      [['run', '--workflow', 'doc', '--input', 'mood=x', 'x'], 1, /workflow doc has no input "mood"/],
      [['run', '--workflow', 'doc', '--to', 'ur-agent', 'x'], 2, /--workflow goes without --to and --session/],
      [['run', '--input', 'a=b', 'x'], 2, /--input goes with --workflow/],
      [['run', '--workflow', 'doc'], 1, /workflow doc needs an input/],
    ];
    for (const [argv, code, message] of cases) {
      const result = await run(argv, dir, env);
      assert.equal(result.code, code, `${argv.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr.replace(/^legion: warning: .*\n/gm, ''), message);
      assert.equal(result.stderr.trimEnd().split('\n').filter((l) => !l.includes('warning')).length, 1, result.stderr);
    }
  });
});

test('legion workflows lists the shipped and project workflows; a broken file is shown with file:line and exits 1', async () => {
  await withTempDir(async (dir) => {
    const env = await workspace(dir, { doc: DOC });
    const listed = await run(['workflows'], dir, env);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /^WORKFLOW\s+STEPS\s+FILE\s+DESCRIPTION/);
    assert.match(listed.stdout, /^doc\s+outline write\s+\S+doc\.yaml\s+outline then write/m);
    assert.match(listed.stdout, /^parallel-review\s+setup correctness security tests summary\s+\S+config\/workflows\/parallel-review\.yaml/m);
    assert.match(listed.stdout, /^plan-implement-review\s+plan implement review\s/m);
    const asJson = JSON.parse((await run(['workflows', '--json'], dir, env)).stdout) as { name: string; inputs: string[] }[];
    assert.deepEqual(asJson.map((w) => w.name), ['doc', 'parallel-implement', 'parallel-review', 'plan-implement-review']);
    await writeFile(join(dir, '.legion', 'workflows', 'loop.yaml'), `steps:\n  - { id: a, agent: ur-agent, prompt: p, after: [b] }\n  - { id: b, agent: ur-agent, prompt: p, after: [a] }\n`);
    const broken = await run(['workflows'], dir, env);
    assert.equal(broken.code, 1);
    assert.match(broken.stdout, /^loop\s+\(broken\)/m);
    assert.match(broken.stderr, /loop\.yaml:\d: steps form a cycle: (a → b → a|b → a → b)$/m);
  });
});

test('legion completion offers workflow names after --workflow', async () => {
  await withTempDir(async (dir) => {
    const env = await workspace(dir, { doc: DOC });
    const result = await run(['completion', '__complete', '--', 'run', '--workflow', ''], dir, env);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(result.stdout.trim().split('\n'), ['doc', 'parallel-implement', 'parallel-review', 'plan-implement-review']);
  });
});

test('legion run --workflow over the real Anthropic SDK: the second step\'s request carries the first step\'s output', async () => {
  const server = await startVendorServer({ strictHistory: true });
  try {
    server.enqueue(
      sse(anthropicStream({ text: ['1. parse ', '2. print'], stopReason: 'end_turn' })),
      sse(anthropicStream({ text: ['Written: ', 'two steps.'], stopReason: 'end_turn' })),
    );
    await withTempDir(async (dir) => {
      await mkdir(join(dir, '.legion', 'workflows'), { recursive: true, mode: 0o700 });
      await writeFile(join(dir, '.legion', 'workflows', 'doc.yaml'), DOC);
      const env = { HOME: dir, ANTHROPIC_API_KEY: 'sk-ant-test-key-0123456789', ANTHROPIC_BASE_URL: server.anthropicURL };
      const result = await runCli(['run', '--workflow', 'doc', 'a tool'], { cwd: dir, env, appDir: APP_DIR });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, 'Written: two steps.\n');
      assert.equal(server.requests.length, 2);
      assert.deepEqual(server.requests.map((r) => r.rejected), [null, null]);
      const bodies = server.requests.map((r) => r.body as { messages: { role: string; content: unknown }[] });
      assert.match(JSON.stringify(bodies[0]!.messages[0]!.content), /outline a tool \(plain\)/);
      assert.match(JSON.stringify(bodies[1]!.messages[0]!.content), /write 1\. parse 2\. print/);
    });
  } finally {
    await server.close();
  }
});

test('bundle: Ctrl+C (SIGINT) during `legion run --workflow` cancels every running step: exit 130, the join step skipped', { timeout: 60_000 }, async () => {
  ensureBundle();
  await withTempDir(async (dir) => {
    await writeFile(join(dir, 'script.yaml'), `version: 1\nreplies:\n  - { agent: ur-agent, when: "^slow", text: "${'slowly '.repeat(200)}", chunkSize: 1, delayMs: 50, repeat: true }\n`);
    await mkdir(join(dir, '.legion', 'workflows'), { recursive: true, mode: 0o700 });
    await writeFile(join(dir, '.legion', 'workflows', 'pair.yaml'), `steps:
  - { id: a, agent: ur-agent, prompt: "slow one {{input}}" }
  - { id: b, agent: ur-agent, prompt: "slow two {{input}}" }
  - { id: join, agent: ur-agent, after: [a, b], prompt: "join {{steps.a.output}} {{steps.b.output}}" }
`, { mode: 0o600 });
    const env = { ...process.env, HOME: dir, LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: join(dir, 'script.yaml'), ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '', LEGION_DEBUG: '' };
    const child = spawn(process.execPath, [bundlePath, 'run', '--workflow', 'pair', '--json', 'x'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    // Interrupt once both steps' answers are streaming (the --json events show it); a child that
    // exits first, or prints a line that is no event, fails the test instead of hanging it.
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const streaming = new Set<string>();
      child.on('exit', (code) => reject(new Error(`legion run exited (${code}) before both steps streamed: ${stderr}`)));
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const lines = out.split('\n');
        out = lines.pop()!;
        for (const line of lines) {
          let e: LegionEvent;
          try {
            e = JSON.parse(line) as LegionEvent;
          } catch {
            reject(new Error(`not a JSON event on stdout: ${line}`));
            return;
          }
          if (e.type === 'text-delta') streaming.add(e.sessionId);
        }
        if (streaming.has('session-user__ur-agent__pair-a') && streaming.has('session-user__ur-agent__pair-b')) resolve();
      });
    });
    child.kill('SIGINT');
    assert.equal(await exited, 130, stderr);
    assert.match(stderr, /^legion: workflow pair: step a cancelled: /m);
    assert.match(stderr, /^legion: workflow pair: step b cancelled: /m);
    assert.match(stderr, /legion: interrupted\n$/);
    const [run] = await readdir(join(dir, '.legion', 'runs'));
    const progress = JSON.parse(await readFile(join(dir, '.legion', 'runs', run!, 'workflows', 'pair-1.json'), 'utf8'));
    assert.deepEqual([progress.status, progress.steps.a.status, progress.steps.b.status, progress.steps.join.status], ['cancelled', 'cancelled', 'cancelled', 'skipped']);
  });
});
