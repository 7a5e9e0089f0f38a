import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { approvalLines, type Tmux } from './modals-support';
import { userGit } from '../unit/checkpoints/helpers';
import type { ModeContext, ModeOptions } from './tui-modes';
import { TWO_AGENTS } from './scripts';

/**
 * The TUI's end-to-end scenarios, one list run in both modes (tui-both-modes.test.ts): local,
 * and attached to a real `legion serve` (docs/serve.md#attaching: the TUI is the same code
 * either way). A scenario says nothing about its mode: what the user sees and what lands on
 * disk must be the same. What is documented to differ (resuming an older run is not offered
 * while attached) stays in the local-only suites.
 */
export interface Scenario {
  readonly name: string;
  /** Extra agents of the workspace (file tools, no approval authority). */
  readonly agents: readonly { id: string; tools: string[] }[];
  readonly script: string;
  /** A new run, and what to do before the mode starts (tui-modes.ts). */
  readonly options?: ModeOptions;
  run(ctx: ModeContext): Promise<void>;
}

const flat = (screen: string): string => screen.replace(/\s+/g, ' ');
/** The header of the focused lane (it carries the focus mark). */
const focusedHeader = (screen: string): string => screen.split('\n').find((l) => /▶ \S+ → \S+ · /.test(l))?.replace(/^.*▶ /, '') ?? '';
/** The line of the screen holding the highlighted queue row. */
const highlighted = (screen: string): string => screen.split('\n').find((l) => /▶ \[[ x]\]/.test(l)) ?? '';

async function newSession(t: Tmux, participant: string, name: string): Promise<void> {
  t.keys('C-n');
  await t.waitFor(/New session/);
  t.type(participant);
  t.keys('Tab');
  t.type(name);
  await t.waitFor(new RegExp(`Opens user → ${participant} · ${name}`));
  t.keys('Enter');
  await t.waitGone(/New session/);
}


const CHAT = `
version: 1
replies:
  - { agent: resource-agent, on: message, repeat: true, text: "resource-agent here." }
  - { agent: scribe, when: "hello scribe", text: "Hi, scribe here: notes are open.", repeat: true }
  - { agent: scout, when: "look around", text: "Scout looked around.", repeat: true }
  - { agent: ur-agent, when: "secret word", text: "The secret word is zanzibar.", repeat: true }
  - { agent: ur-agent, repeat: true, text: "ur-agent heard you." }
`;
const CHAT_AGENTS = [{ id: 'scribe', tools: ['file_read'] }, { id: 'scout', tools: ['file_read'] }];

/** ur-agent delegates to scribe in its own git worktree; scribe edits a tracked file and adds one (docs/worktrees.md). */
const ISOLATED = `
version: 1
replies:
  - agent: ur-agent
    first: true
    text: "Delegating to scribe in a worktree."
    toolCalls:
      - { name: communicator, input: { targetId: scribe, sessionName: iso, isolation: worktree, message: "edit shared.txt and add notes.txt" } }
  - agent: scribe
    first: true
    text: "Writing in my worktree."
    toolCalls:
      - { name: file_write, input: { path: shared.txt, content: "one\\ntwo by scribe\\nthree\\n" } }
      - { name: file_write, input: { path: notes.txt, content: "scribe was here\\n" } }
  - { agent: scribe, on: tool-result, repeat: true, text: "scribe finished" }
  - { agent: ur-agent, on: tool-result, repeat: true, text: "The delegate answered." }
  - { agent: ur-agent, on: message, repeat: true, text: "ur-agent heard you." }
`;
const ISOLATED_SESSION = 'session-ur-agent__scribe__iso';

export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'first screen: the empty home lane welcomes and names the workspace; F1 shows the keys, Esc closes it',
    agents: [],
    script: CHAT,
    async run({ dir, openTui }) {
      const t = await openTui();
      const s = flat(await t.waitFor(/Welcome to Legion\./));
      assert.match(s, /Type what you want done and press Enter\./);
      assert.ok(s.includes(`Workspace: ${dir}`), s);
      assert.match(focusedHeader(t.screen()), /^user → ur-agent · default/);
      t.keys('F1');
      await t.waitFor(/Ctrl\+Y/);
      await t.waitFor(/Keys/);
      t.keys('Escape');
      await t.waitGone(/^\s*│?\s*Keys\b/m);
      t.type('hello');
      t.keys('Enter');
      await t.waitFor(/ur-agent heard you\./, 30_000);
    },
  },
  {
    name: 'lanes: after `legion run --to resource-agent`, the TUI opens on the home lane, first and focused; typing goes to ur-agent',
    agents: [],
    script: CHAT,
    async run({ cli, dir, openTui }) {
      const run = cli(['run', '--to', 'resource-agent', 'make a scribe']);
      assert.equal(run.status, 0, run.stderr);
      assert.equal(run.stdout, 'resource-agent here.\n');
      const t = await openTui();
      const screen = await t.waitFor(/(?=[\s\S]*user → ur-agent · default)(?=[\s\S]*user → resource-agent · default)/, 15_000);
      const header = screen.split('\n').find((l) => /user → ur-agent · default/.test(l)) ?? '';
      assert.match(header, /^▶ user → ur-agent · default/, 'the home lane is first and focused');
      assert.match(header, /user → resource-agent · default/, 'the resource-agent lane follows beside it');
      assert.doesNotMatch(screen, /▶ user → resource-agent/);
      assert.match(screen, /› +message ur-agent…/);
      t.type('hello home');
      t.keys('Enter');
      await t.waitFor(/ur-agent heard you\./, 30_000);
      assert.match(focusedHeader(t.screen()), /^user → ur-agent · default/);
      const runs = await readdir(join(dir, '.legion', 'runs'));
      assert.equal(runs.length, 1, 'one run: the TUI joined the one `legion run` used');
      assert.match(await readFile(join(dir, '.legion', 'runs', runs[0]!, 'sessions', 'session-user__ur-agent__default.jsonl'), 'utf8'), /hello home/);
    },
  },
  {
    name: 'approvals: two agents ask at once, the queue opens by itself; approve one, reject one with a reason, Y the rest; text typed into the empty queue goes to the composer',
    agents: [{ id: 'scribe', tools: ['file_write', 'file_read'] }, { id: 'scout', tools: ['file_write', 'file_read'] }],
    script: TWO_AGENTS,
    async run({ dir, openTui }) {
      const t = await openTui();
      await t.waitFor(/message ur-agent/);
      t.type('go');
      t.keys('Enter');
      let s = await t.waitFor(/Approval queue · 4 waiting for you/, 30_000);
      assert.match(s, /user → ur-agent → scribe {2}\(2\)/);
      assert.match(s, /user → ur-agent → scout {2}\(2\)/);
      assert.match(highlighted(s), /file_write a1\.txt/);
      t.type('y');
      // The count and the decision's line may be two frames (attached: the line comes back from
      // the server), and tmux can capture a frame half drawn: wait for each thing seen.
      await t.waitFor(/3 waiting for you/);
      s = await t.waitFor(/approved file_write a1\.txt/);
      assert.match(highlighted(s), /file_write a2\.txt/);
      t.type('n');
      await t.waitFor(/Reject 1 request\. Reason \(optional\):/);
      t.type('name it a3 instead');
      t.keys('Enter');
      await t.waitFor(/2 waiting for you/);
      await t.waitFor(/rejected file_write a2\.txt \(name it a3 instead\)/);
      t.type('Y');
      await t.waitGone(/Approval queue/);
      await t.waitFor(/All delegates answered\./, 30_000);
      assert.equal(await readFile(join(dir, 'a1.txt'), 'utf8'), 'alpha one\n');
      assert.equal(existsSync(join(dir, 'a2.txt')), false);
      assert.equal(await readFile(join(dir, 'b1.txt'), 'utf8'), 'bravo one\n');
      assert.equal(await readFile(join(dir, 'b2.txt'), 'utf8'), 'bravo two\n');
      const lines = await approvalLines(dir);
      const requests = lines.filter((l) => l.kind === 'request');
      const decided = lines.filter((l) => l.kind === 'resolve');
      assert.equal(requests.length, 4, JSON.stringify(lines));
      assert.equal(decided.length, 4, JSON.stringify(lines));
      assert.ok(decided.every((d) => d.decidedBy === 'user'));
      const byPath = new Map(requests.map((r) => [(r.input as { path: string }).path, r.requestId]));
      const decisionOf = (path: string): Record<string, unknown> | undefined => decided.find((d) => d.requestId === byPath.get(path));
      assert.equal(decisionOf('a2.txt')?.decision, 'rejected');
      assert.match(String(decisionOf('a2.txt')?.reason), /name it a3 instead/);
      // The user opens the empty queue, then types: the text goes to the composer, never eaten.
      t.keys('C-y');
      await t.waitFor(/Approval queue · nothing waiting for you/);
      t.type('thanks all');
      await t.waitGone(/Approval queue/);
      await t.waitFor(/› +thanks all/);
      t.keys('Enter');
      await t.waitFor(/ur-agent heard you\./, 30_000);
    },
  },
  {
    name: 'modals: Ctrl+N opens user → scribe · notes focused and chats; Ctrl+P finds a session by typing and focuses it',
    agents: CHAT_AGENTS,
    script: CHAT,
    async run({ openTui }) {
      const t = await openTui();
      await t.waitFor(/message ur-agent/);
      await newSession(t, 'scribe', 'notes');
      let s = await t.waitFor(/message scribe · notes/);
      assert.match(focusedHeader(s), /user → scribe · notes/);
      t.type('hello scribe');
      t.keys('Enter');
      await t.waitFor(/Hi, scribe here: notes are open\./, 30_000);
      await newSession(t, 'scout', 'recon');
      t.type('look around');
      t.keys('Enter');
      await t.waitFor(/Scout looked around\./, 30_000);
      assert.match(focusedHeader(t.screen()), /user → scout · recon/);
      t.keys('C-p');
      s = await t.waitFor(/Sessions · 3/);
      assert.match(s, /user → scribe · notes/);
      assert.match(s, /user → scout · recon/);
      assert.match(s, /user → ur-agent · default/);
      t.type('notes');
      s = await t.waitFor(/Sessions · 1 of 3/);
      assert.match(s, /▶ user → scribe · notes/);
      t.keys('Enter');
      await t.waitGone(/Sessions ·/);
      s = await t.waitFor(/message scribe · notes/);
      assert.match(focusedHeader(s), /user → scribe · notes/);
    },
  },
  {
    name: 'history: Ctrl+O lists the runs, finds a word of an earlier run and shows it in its transcript',
    agents: CHAT_AGENTS,
    script: CHAT,
    options: {
      newRun: true,
      async before({ cli }) {
        const earlier = cli(['run', '--no-attach', 'what is the secret word?']);
        assert.equal(earlier.status, 0, earlier.stderr);
        assert.equal(earlier.stdout, 'The secret word is zanzibar.\n');
      },
    },
    async run({ dir, openTui }) {
      const t = await openTui();
      // The earlier run: the one whose home session holds the word (run ids made in the same second sort by chance).
      const runs = await readdir(join(dir, '.legion', 'runs'));
      const homeOf = (run: string): Promise<string> => readFile(join(dir, '.legion', 'runs', run, 'sessions', 'session-user__ur-agent__default.jsonl'), 'utf8').catch(() => '');
      const oldRun = (await Promise.all(runs.map(async (run) => ((await homeOf(run)).includes('zanzibar') ? run : null)))).find((r) => r !== null);
      assert.ok(oldRun, runs.join(', '));
      let s = await t.waitFor(/message ur-agent/);
      assert.doesNotMatch(s, /zanzibar/);
      t.type('hi');
      t.keys('Enter');
      await t.waitFor(/ur-agent heard you\./, 30_000);
      t.keys('C-o');
      s = await t.waitFor(/History · runs[\s\S]*\(current\)/);
      assert.match(s, /what is the secret word\?/);
      t.keys('Down');
      t.type('/');
      await t.waitFor(/^\s*│?\s*\/ /m);
      t.type('ZANZIBAR');
      t.keys('Enter');
      s = await t.waitFor(new RegExp(`"ZANZIBAR" in run ${oldRun} · 1 hit`));
      assert.match(s, /user → ur-agent · default +The secret word is zanzibar\./);
      t.keys('Enter');
      await t.waitFor(new RegExp(`History · user → ur-agent · default · run ${oldRun}[\\s\\S]*what is the secret word\\?`), 20_000);
      // One Esc closes the browser from any level. No spare ones: an Esc still unread when the
      // harness quits arrives with its Ctrl+C as one chunk (Alt+Ctrl+C), and the TUI stays open.
      t.keys('Escape');
      await t.waitGone(/History ·/);
    },
  },
  {
    name: 'worktrees: ur-agent delegates with isolation worktree, the agent writes; its merge request shows the diff, `y` approves, the files land uncommitted',
    agents: [{ id: 'scribe', tools: ['file_write', 'file_read'] }],
    script: ISOLATED,
    options: {
      async before({ dir }) {
        // The workspace is a git repository with one commit on main; Legion's folder and the script are ignored,
        // and so is .config/: the harness's HOME is this folder, where every start records its .legion/ in the
        // trust registry (docs/workspace-trust.md#the-registry).
        userGit(dir, ['init', '-q', '-b', 'main']);
        await writeFile(join(dir, '.gitignore'), '.legion/\n.config/\nscript.yaml\n');
        await writeFile(join(dir, 'shared.txt'), 'one\ntwo\nthree\n');
        userGit(dir, ['add', '-A']);
        userGit(dir, ['commit', '-q', '-m', 'initial']);
      },
    },
    async run({ dir, openTui }) {
      const head = userGit(dir, ['rev-parse', 'HEAD']).trim();
      const t = await openTui();
      await t.waitFor(/message ur-agent/);
      t.type('go');
      t.keys('Enter');
      // The writes in the worktree ask nothing; the one request is the merge, and the workspace is untouched until then.
      let s = await t.waitFor(/Approval queue · 1 waiting for you/, 30_000);
      assert.match(highlighted(s), new RegExp(`merge ${ISOLATED_SESSION} +· merge scribe's work from its worktree`));
      assert.equal(await readFile(join(dir, 'shared.txt'), 'utf8'), 'one\ntwo\nthree\n');
      assert.equal(existsSync(join(dir, 'notes.txt')), false);
      assert.equal(await readFile(join(dir, '.legion', 'worktrees', ISOLATED_SESSION, 'notes.txt'), 'utf8'), 'scribe was here\n');
      t.keys('Enter');
      // The diff's last change, so the frame is whole in the capture (tmux may show a frame still being written).
      s = await t.waitFor(/\+two by scribe/, 20_000);
      assert.match(s, /\+scribe was here/);
      assert.match(s, /Request 1 of 1 · merge/);
      assert.match(s, /2 files changed, 2 insertions\(\+\), 1 deletion\(-\)/);
      assert.match(s, /-two\b/);
      t.type('y');
      await t.waitFor(/The delegate answered\./, 30_000);
      assert.equal(await readFile(join(dir, 'shared.txt'), 'utf8'), 'one\ntwo by scribe\nthree\n');
      assert.equal(await readFile(join(dir, 'notes.txt'), 'utf8'), 'scribe was here\n');
      // Uncommitted: git sees a modified and an untracked file, and the user's branch has no new commit.
      assert.equal(userGit(dir, ['status', '--porcelain']), ' M shared.txt\n?? notes.txt\n');
      assert.equal(userGit(dir, ['rev-parse', 'HEAD']).trim(), head);
      assert.equal(userGit(dir, ['rev-list', '--count', 'main']).trim(), '1');
      assert.equal(userGit(dir, ['show', `legion/${ISOLATED_SESSION}:notes.txt`]), 'scribe was here\n', 'the branch holds the work');
      const decided = (await approvalLines(dir)).filter((l) => l.kind === 'resolve');
      assert.deepEqual(decided.map((d) => [d.decision, d.decidedBy]), [['approved', 'user']]);
    },
  },
];
