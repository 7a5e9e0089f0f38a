import { join } from 'node:path';

/** The on-disk format version this build reads and writes. */
export const WORKSPACE_VERSION = 1;

/** Paths of the `.legion/` workspace (docs/design.md#files-on-disk). Pure: creates nothing. */
export interface Layout {
  readonly root: string;
  readonly legionDir: string;
  readonly marker: string;
  readonly config: string;
  readonly rules: string;
  readonly participantsDir: string;
  readonly runsDir: string;
  readonly auditDir: string;
  participant(id: string): string;
  runDir(runId: string): string;
  runFile(runId: string): string;
  runLock(runId: string): string;
  sessionsDir(runId: string): string;
  sessionFile(runId: string, sessionId: string): string;
  events(runId: string): string;
  approvals(runId: string): string;
  todos(runId: string): string;
  /** Token and cost totals of the run and its sessions (src/runtime/usage-book.ts). */
  usage(runId: string): string;
  audit(date: Date): string;
  /** Isolated sessions' worktrees, their records and merge journals (docs/worktrees.md). */
  readonly worktreesDir: string;
  /** The diff (or conflicting hunks) a session's merge request shows (docs/worktrees.md). */
  worktreeDiff(sessionId: string): string;
}

export function layoutFor(workspaceRoot: string): Layout {
  const legionDir = join(workspaceRoot, '.legion');
  const runsDir = join(legionDir, 'runs');
  const participantsDir = join(legionDir, 'collective', 'participants');
  const auditDir = join(legionDir, 'audit');
  return {
    root: workspaceRoot,
    legionDir,
    marker: join(legionDir, 'legion.json'),
    config: join(legionDir, 'config.yaml'),
    rules: join(legionDir, 'rules.yaml'),
    participantsDir,
    runsDir,
    auditDir,
    participant: (id) => join(participantsDir, `${id}.json`),
    runDir: (runId) => join(runsDir, runId),
    runFile: (runId) => join(runsDir, runId, 'run.json'),
    runLock: (runId) => join(runsDir, runId, 'lock'),
    sessionsDir: (runId) => join(runsDir, runId, 'sessions'),
    sessionFile: (runId, sessionId) => join(runsDir, runId, 'sessions', `${sessionId}.jsonl`),
    events: (runId) => join(runsDir, runId, 'events.jsonl'),
    approvals: (runId) => join(runsDir, runId, 'approvals.jsonl'),
    todos: (runId) => join(runsDir, runId, 'todos.json'),
    usage: (runId) => join(runsDir, runId, 'usage.json'),
    audit: (date) => join(auditDir, `audit-${date.toISOString().slice(0, 10)}.jsonl`),
    worktreesDir: join(legionDir, 'worktrees'),
    worktreeDiff: (sessionId) => join(legionDir, 'worktrees', `${sessionId}.diff`),
  };
}
