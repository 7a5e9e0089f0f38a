import type { Command } from '../command';
import { LegionError } from '../../errors';
import { planRepair } from '../../model/repair';
import { toolUsesOf } from '../../model/message';
import { readPendingApprovals } from '../../authz/approvals';
import { raisedFor } from '../../runtime/resume-plan';
import { layoutFor, type Layout } from '../../storage/layout';
import { checkWorkspace } from '../../storage/workspace';
import { createRunStore, type FileRunStore } from '../../session/run-store';
import { randomIds, systemClock } from '../../session/ids';
import { readSessionFile } from '../../session/session-files';
import { renderTranscript } from '../../session/transcript';
import { formatStamp, formatTable, clip } from '../../session/format';
import type { RunRecord } from '../../session/types';
import type { CliIo } from '../io';
import { keyArgumentOf } from '../../collective/tools/shipped';

async function findRun(runs: FileRunStore, runId: string | undefined): Promise<RunRecord> {
  if (runId === undefined) {
    const latest = await runs.latest();
    if (!latest) throw new LegionError('no runs yet: start one with `legion` or `legion run <message>`');
    return latest;
  }
  const run = await runs.get(runId);
  if (!run) throw new LegionError(`no run "${runId}" (see \`legion runs\`)`);
  return run;
}

async function showSessions(io: CliIo, runs: FileRunStore, run: RunRecord): Promise<void> {
  const loaded = await runs.inspect(run, systemClock());
  for (const issue of loaded.issues) io.stderr(`legion: note: ${issue.message}\n`);
  const title = run.title ? ` · ${clip(run.title, 60)}` : '';
  io.stdout(`run ${run.id} · created ${formatStamp(run.createdAt)}${title}\n`);
  const sessions = loaded.sessions.list().sort((a, b) => (a.lastActivity() < b.lastActivity() ? 1 : a.lastActivity() > b.lastActivity() ? -1 : a.id < b.id ? -1 : 1));
  if (sessions.length === 0) {
    io.stdout('no sessions yet\n');
    return;
  }
  const rows = sessions.map((s) => [s.id, `${s.key.initiatorId} → ${s.key.responderId}`, s.key.name, String(s.messages().length), formatStamp(s.lastActivity())]);
  io.stdout('\n' + formatTable(['SESSION', 'PARTICIPANTS', 'NAME', 'MESSAGES', 'LAST ACTIVITY'], rows, [3]));
}

async function showTranscript(io: CliIo, layout: Layout, run: RunRecord, wanted: string): Promise<void> {
  const sessionId = wanted.startsWith('session-') ? wanted : `session-${wanted}`;
  const read = await readSessionFile(layout, run.id, sessionId);
  if (!read) throw new LegionError(`no session "${wanted}" in run ${run.id} (see \`legion show ${run.id}\`)`);
  for (const issue of read.issues) io.stderr(`legion: note: ${issue.message}\n`);
  // Repaired for display only: `show` never writes. A batch left open while approvals were
  // pending (its own, or of a call chain below it) says so instead of "interrupted".
  const pending = (await readPendingApprovals(layout.approvals(run.id))).filter((r) => r.chain.length >= 2);
  const last = read.messages[read.messages.length - 1];
  const uses = last && last.role === 'assistant' ? toolUsesOf(last) : [];
  const open = { sessionId, key: read.key, toolUseIds: uses.map((u) => u.id), uses };
  const own = pending.filter((r) => raisedFor(r, open)).map((r) => r.requestId);
  const below = pending.filter((r) => {
    const at = r.chain.indexOf(read.key.responderId);
    return at > 0 && at < r.chain.length - 1 && r.chain[at - 1] === read.key.initiatorId;
  }).map((r) => r.requestId);
  const ids = own.length > 0 ? own : below;
  const waiting = uses.length > 0 && ids.length > 0
    ? `open: ${own.length > 0 ? 'waiting for approval' : 'a call below waits for approval'} (${ids.join(', ')}); resumed or expired when Legion starts`
    : undefined;
  const repair = planRepair(read.messages, systemClock().toISOString(), waiting);
  io.stdout(renderTranscript(read.key, [...read.messages, ...repair.append], keyArgumentOf, read.records));
}

/** `legion show [<runId>] [--session <id>]`: read-only (no lock, no writes, repairs in memory). */
export const showCommand: Command = {
  name: 'show',
  usage: 'legion show [<runId>] [--session <id>]',
  summary: "print a run's sessions, or one session's transcript (default: the latest run)",
  flags: { session: 'value' },
  async run({ args, io, workspaceRoot }) {
    if (args.positionals.length > 1) throw new LegionError(`legion show takes one run id (got ${args.positionals.length} arguments)`, 2);
    const layout = layoutFor(workspaceRoot);
    const check = await checkWorkspace(layout);
    if (!check.ok) throw new LegionError(check.error);
    const runs = createRunStore(layout, systemClock, randomIds);
    const run = await findRun(runs, args.positionals[0]);
    const session = args.flags.get('session');
    if (typeof session === 'string') await showTranscript(io, layout, run, session);
    else await showSessions(io, runs, run);
    return 0;
  },
};
