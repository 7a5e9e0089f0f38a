import '../helpers/own-home';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { REPO_ROOT, bundlePath, cleanAppEnv, ensureBundle } from '../helpers/bundle';
import { withTempDir } from '../helpers/tmp';
import { startVendorServer, sse, type VendorServer } from '../helpers/vendor-server';
import { anthropicStream, openaiStream } from '../helpers/vendor-streams';
import { trustWorkspace } from '../helpers/trust';

/**
 * The code of modules a start never evaluates is in dist/legion-lazy-<hash>.js, read and
 * compiled at their first evaluation (scripts/lazy-modules.mjs): `legion run` (its command
 * module), the provider SDKs and what a tool call runs are all there. A turn with a tool call
 * through each real SDK, against a local server, from the start-up snapshot (the launcher) and
 * from the plain bundle: it fails if a lazy module did not load or did not see the bundle's
 * bindings (test/unit/build/lazy-modules.test.ts has the mechanism's own cases). A file
 * altered after the build (the SDK's code replaced at the same length) stops the turn with an
 * error naming it, and the altered code never runs.
 */
const LAUNCHER = join(REPO_ROOT, 'dist', 'legion');
let server: VendorServer;
before(async () => {
  ensureBundle({ e2e: true });
  server = await startVendorServer({ strictHistory: true });
});
after(() => server.close());

function run(command: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0]!, command.slice(1), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The lazy modules' file the current build's bundle (the one dist/legion.js runs) names. */
const lazyFile = (): string => {
  const app = /legion-app-[0-9a-f]+\.cjs/.exec(readFileSync(bundlePath, 'utf8'))?.[0];
  assert.ok(app, 'dist/legion.js names its bundle');
  const name = /legion-lazy-[0-9a-f]+\.js/.exec(readFileSync(join(REPO_ROOT, 'dist', app), 'latin1'))?.[0];
  assert.ok(name && existsSync(join(REPO_ROOT, 'dist', name)), 'the bundle names its lazy modules\' file, and the build wrote it');
  return join(REPO_ROOT, 'dist', name);
};

for (const vendor of ['anthropic', 'openai'] as const) {
  for (const start of ['snapshot', 'plain'] as const) {
    test(`${vendor}, ${start} start: legion run with a tool call through the SDK, loaded from the lazy modules`, { timeout: 120_000 }, async () => {
      const launcher = readFileSync(LAUNCHER, 'utf8');
      if (start === 'snapshot') assert.match(launcher, /--snapshot-blob '[^']+'/, 'the build made a snapshot');
      const lazy = readFileSync(lazyFile(), 'latin1');
      for (const sdk of ['@anthropic-ai/sdk', 'openai']) assert.ok(lazy.includes(`node_modules/${sdk}/`), `${sdk} is in the lazy part`);
      await withTempDir(async (dir) => {
        await mkdir(join(dir, '.legion'), { recursive: true, mode: 0o700 });
        await writeFile(join(dir, '.legion', 'config.yaml'), 'providers:\n  idleTimeoutMs: 10000\n  maxRetries: 1\n', { mode: 0o600 });
        const keys =
          vendor === 'anthropic'
            ? { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: server.anthropicURL, LEGION_MODEL: 'claude-haiku-4-5' }
            : { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.openaiURL, LEGION_MODEL: 'gpt-4.1' };
        const env = { ...cleanAppEnv(), HOME: dir, ...keys };
        await trustWorkspace(dir, env);
        const before = server.requests.length;
        server.enqueue(
          sse(vendor === 'anthropic'
            ? anthropicStream({ text: ['Let me look.'], tool: { id: 'toolu_l1', name: 'list_participants', json: ['{}'] } })
            : openaiStream({ text: ['Let me look.'], toolDeltas: [{ index: 0, id: 'call_l1', name: 'list_participants', args: '{}' }] })),
          sse(vendor === 'anthropic' ? anthropicStream({ text: ['Lazy modules work.'] }) : openaiStream({ text: ['Lazy modules work.'] })),
        );
        const command = start === 'snapshot' ? [LAUNCHER, 'run', 'who is here?'] : [process.execPath, bundlePath, 'run', 'who is here?'];
        const r = await run(command, dir, env);
        assert.equal(r.code, 0, `exit; stdout=${r.stdout} stderr=${r.stderr}`);
        assert.match(r.stdout, /Lazy modules work\./);
        const mine = server.requests.slice(before);
        assert.equal(mine.length, 2, 'the turn and, after the tool call, its answer');
        assert.deepEqual(mine.map((q) => q.rejected), [null, null]);
        // The tool's result went back to the model: the participants' list, made by the tool.
        assert.match(JSON.stringify(mine[1]!.body.messages), /ur-agent/);
      });
    });
  }
}

// The faux script's zod schemas are built at their first use (src/providers/faux-script.ts): the
// snapshot holds only the shipped demo script's parse. A script of the user's, from the snapshot,
// is parsed by schemas built then: its tool call runs, and a bad one is reported on its line.
test('snapshot start: a faux script of the user\'s is parsed by schemas built at first use (a tool call runs; an error names its line)', { timeout: 120_000 }, async () => {
  await withTempDir(async (dir) => {
    const env = { ...cleanAppEnv(), HOME: dir };
    await writeFile(join(dir, 'script.yaml'), [
      'replies:',
      '  - on: message',
      '    toolCalls:',
      '      - name: list_participants',
      '  - on: tool-result',
      '    when: ur-agent',
      '    text: "The lazy schemas parsed this script."',
      '',
    ].join('\n'));
    const ok = await run([LAUNCHER, 'run', 'who is here?'], dir, { ...env, LEGION_FAUX_SCRIPT: join(dir, 'script.yaml') });
    assert.equal(ok.code, 0, `exit; stdout=${ok.stdout} stderr=${ok.stderr}`);
    assert.match(ok.stdout, /The lazy schemas parsed this script\./);
    await writeFile(join(dir, 'bad.yaml'), 'replies:\n  - text: a\n    when: "(unclosed"\n');
    const bad = await run([LAUNCHER, 'run', 'hello'], dir, { ...env, LEGION_FAUX_SCRIPT: join(dir, 'bad.yaml') });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /bad\.yaml:3: replies\.0\.when: not a valid regular expression/);
  });
});

// dist/ may lie where an agent writes (Legion run on its own repository, or from a project's
// node_modules): the agent replaces the Anthropic SDK's code in the lazy modules' file, at the
// same length, with code that would run in Legion's process (which holds the API keys). On a
// copy of the plain bundle's files and config/ (the snapshot names the build's own dist/ folder).
test('plain start: the lazy modules\' file altered after the build stops the turn with an error naming it; the altered code never runs', { timeout: 120_000 }, async () => {
  await withTempDir(async (dir) => {
    const dist = join(dir, 'dist');
    await mkdir(dist);
    const app = /legion-app-[0-9a-f]+\.cjs/.exec(readFileSync(bundlePath, 'utf8'))![0];
    const lazyPath = lazyFile();
    const wasm = /legion-restate-[0-9a-f]+\.wasm/.exec(readFileSync(join(REPO_ROOT, 'dist', app), 'latin1'))?.[0];
    for (const name of ['legion.js', app, basename(lazyPath), ...(wasm ? [wasm] : [])]) copyFileSync(join(REPO_ROOT, 'dist', name), join(dist, name));
    cpSync(join(REPO_ROOT, 'config'), join(dir, 'config'), { recursive: true });
    const marker = join(dir, 'marker');
    const lazy = readFileSync(lazyPath, 'latin1');
    // The text of the SDK's client module: from its wrapper's start to the sourceURL line after it.
    const key = /\(\{"([^"]*node_modules\/@anthropic-ai\/sdk\/client\.mjs)"\(/.exec(lazy)?.[1];
    assert.ok(key, 'the SDK\'s client module is in the lazy part');
    const from = lazy.indexOf(`({"${key}"(`);
    const to = lazy.indexOf('\n', lazy.indexOf(`//# sourceURL=legion-lazy:${key}`, from)) + 1;
    const code = `(function(){require("node:fs").writeFileSync(${JSON.stringify(marker)},"altered")})`;
    assert.ok(to > from && code.length < to - from);
    writeFileSync(join(dist, basename(lazyPath)), lazy.slice(0, from) + code.padEnd(to - from, ' ') + lazy.slice(to), 'latin1');
    const home = join(dir, 'home');
    const workspace = join(dir, 'workspace');
    await mkdir(join(workspace, '.legion'), { recursive: true, mode: 0o700 });
    await mkdir(home);
    const env = { ...cleanAppEnv(), HOME: home, ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: server.anthropicURL, LEGION_MODEL: 'claude-haiku-4-5' };
    await trustWorkspace(workspace, env);
    const before = server.requests.length;
    const r = await run([process.execPath, join(dist, 'legion.js'), 'run', 'who is here?'], workspace, env);
    assert.notEqual(r.code, 0, `exit; stdout=${r.stdout} stderr=${r.stderr}`);
    assert.match(r.stderr + r.stdout, new RegExp(`${basename(lazyPath).replace('.', '\\.')} was changed after the build: reinstall Legion`));
    assert.equal(existsSync(marker), false, 'the altered code did not run');
    assert.equal(server.requests.length, before, 'no request was made');
  });
});

// The tools' argument schemas are built at their first use (src/storage/lazy-schema.ts), and the
// snapshot build drops those its warm-up built: a start from the snapshot builds one at its
// tool's first call. A call with bad arguments still gets the one-line refusal, and the tool does
// not run; a good call of the same tool then runs.
test('snapshot start: a tool call is validated by its schema built at first use (bad arguments refused in one line, good ones run)', { timeout: 120_000 }, async () => {
  await withTempDir(async (dir) => {
    const env = { ...cleanAppEnv(), HOME: dir };
    await writeFile(join(dir, 'script.yaml'), [
      'replies:',
      '  - on: message',
      '    toolCalls:',
      '      - name: todo_write',
      '        input: { todos: "not a list", extra: 1 }',
      '  - on: tool-error',
      '    when: "invalid input for todo_write: todos: .*expected array.*unrecognized key"',
      '    toolCalls:',
      '      - name: todo_write',
      '        input: { todos: [{ id: "1", content: "the lazy schema let this through", status: pending }] }',
      '  - on: tool-result',
      '    when: the lazy schema let this through',
      '    text: "Refused, then written."',
      '',
    ].join('\n'));
    const r = await run([LAUNCHER, 'run', 'plan it'], dir, { ...env, LEGION_FAUX_SCRIPT: join(dir, 'script.yaml') });
    assert.equal(r.code, 0, `exit; stdout=${r.stdout} stderr=${r.stderr}`);
    assert.match(r.stdout, /Refused, then written\./);
  });
});

// The models file's schema is built at its first use too, and the snapshot build (which parsed the
// shipped file with it) drops it: a user's models file with a bad price, from the snapshot, is
// still refused with its file, line and key.
test('snapshot start: a user\'s models file is validated by its schema built at first use (a bad price named by file and line)', { timeout: 120_000 }, async () => {
  await withTempDir(async (dir) => {
    const config = join(dir, 'xdg');
    await mkdir(join(config, 'legion'), { recursive: true, mode: 0o700 });
    await writeFile(join(config, 'legion', 'models.yaml'), 'version: 1\nmodels:\n  m:\n    input: 1\n    output: -2\n', { mode: 0o600 });
    await writeFile(join(dir, 'script.yaml'), 'replies:\n  - text: "priced"\n');
    const r = await run([LAUNCHER, 'run', 'hello'], dir, { ...cleanAppEnv(), HOME: dir, XDG_CONFIG_HOME: config, LEGION_FAUX_SCRIPT: join(dir, 'script.yaml') });
    assert.equal(r.code, 0, `exit; stdout=${r.stdout} stderr=${r.stderr}`);
    assert.match(r.stderr, /xdg\/legion\/models\.yaml:5: models\.m\.output: Too small/);
  });
});

// The rules files' schemas are built at their first use: a start with only the shipped rules takes
// their compilation from the snapshot and builds none. A user's rules file, from the snapshot, is
// still checked: a bad decision stops the start with its file and line, and an unknown field too.
test('snapshot start: a user\'s rules file is checked by schemas built at first use (a bad rule named by file and line)', { timeout: 120_000 }, async () => {
  await withTempDir(async (dir) => {
    const config = join(dir, 'xdg');
    await mkdir(join(config, 'legion'), { recursive: true, mode: 0o700 });
    await writeFile(join(dir, 'script.yaml'), 'replies:\n  - text: "ruled"\n');
    const env = { ...cleanAppEnv(), HOME: dir, XDG_CONFIG_HOME: config, LEGION_FAUX_SCRIPT: join(dir, 'script.yaml') };
    await writeFile(join(config, 'legion', 'rules.yaml'), 'version: 1\nrules:\n  - id: r1\n    decision: maybe\n    tool: file_read\n', { mode: 0o600 });
    const bad = await run([LAUNCHER, 'run', 'hello'], dir, env);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /xdg\/legion\/rules\.yaml:4: rule r1: unknown decision "maybe"/);
    await writeFile(join(config, 'legion', 'rules.yaml'), 'version: 1\nrules:\n  - id: r1\n    decision: deny\n    tool: file_read\n    when: always\n', { mode: 0o600 });
    const unknown = await run([LAUNCHER, 'run', 'hello'], dir, env);
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /xdg\/legion\/rules\.yaml:6: .*when/);
    await writeFile(join(config, 'legion', 'rules.yaml'), 'version: 1\nrules:\n  - id: r1\n    decision: deny\n    tool: file_read\n', { mode: 0o600 });
    const ok = await run([LAUNCHER, 'run', 'hello'], dir, env);
    assert.equal(ok.code, 0, `exit; stdout=${ok.stdout} stderr=${ok.stderr}`);
    assert.match(ok.stdout, /ruled/);
  });
});

// The config's and the participants' schemas are built at their first use: a start whose config
// is the shipped file alone, and whose participant files are the ones `legion init` wrote, takes
// their validation from the snapshot and builds none. From the snapshot, a user's config with a
// bad value still stops the start naming file, line and key; a participant file edited to a bad
// value too; and a good user config applies.
test('snapshot start: a user\'s config and an edited participant file are validated by schemas built at first use', { timeout: 120_000 }, async () => {
  await withTempDir(async (dir) => {
    const config = join(dir, 'xdg');
    await mkdir(join(config, 'legion'), { recursive: true, mode: 0o700 });
    await writeFile(join(dir, 'script.yaml'), 'replies:\n  - text: "configured"\n');
    const env = { ...cleanAppEnv(), HOME: dir, XDG_CONFIG_HOME: config, LEGION_FAUX_SCRIPT: join(dir, 'script.yaml') };
    await writeFile(join(config, 'legion', 'config.yaml'), 'version: 1\nui:\n  maxFps: 0\n', { mode: 0o600 });
    const bad = await run([LAUNCHER, 'run', 'hello'], dir, env);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /xdg\/legion\/config\.yaml:3: ui\.maxFps/);
    await writeFile(join(config, 'legion', 'config.yaml'), 'version: 1\nui:\n  maxFps: 20\n', { mode: 0o600 });
    const ok = await run([LAUNCHER, 'run', 'hello'], dir, env);
    assert.equal(ok.code, 0, `exit; stdout=${ok.stdout} stderr=${ok.stderr}`);
    assert.match(ok.stdout, /configured/);
    const init = await run([LAUNCHER, 'init'], dir, env);
    assert.equal(init.code, 0, `init; stdout=${init.stdout} stderr=${init.stderr}`);
    const file = join(dir, '.legion', 'collective', 'participants', 'resource-agent.json');
    writeFileSync(file, readFileSync(file, 'utf8').replace('"status": "active"', '"status": "sleeping"'));
    const edited = await run([LAUNCHER, 'run', 'hello'], dir, env);
    assert.notEqual(edited.code, 0);
    assert.match(edited.stderr, /participants\/resource-agent\.json: status/);
  });
});
