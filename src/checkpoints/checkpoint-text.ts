import type { Checkpoint } from './records';
import type { UndoPlan, PlannedFile } from './undo-plan';

/** One-line descriptions shared by `legion undo` and the TUI (docs/undo.md). */

/** `M a.txt, A b.txt, D c.txt` (first `max`, then "+N more"); "(running)" before the batch ended. */
export function changedFilesText(checkpoint: Checkpoint, max = 3): string {
  if (!checkpoint.after) return '(batch not finished)';
  const files = checkpoint.after.files;
  if (files.length === 0) return 'no file changed';
  const shown = files.slice(0, max).map((f) => `${f.status} ${f.path}`).join(', ');
  return files.length > max ? `${shown} +${files.length - max} more` : shown;
}

/** Who made the checkpoint and why: "scribe · turn 3 · file_write, shell" or "user · undo of ck-…". */
export function checkpointOrigin(checkpoint: Checkpoint): string {
  if (checkpoint.restoreOf) return `user · undo to before ${checkpoint.restoreOf}`;
  return `${checkpoint.participantId} · turn ${checkpoint.turn} · ${[...new Set(checkpoint.toolNames)].join(', ')}`;
}

const ACTION_MARK: Record<PlannedFile['action'], string> = { delete: 'remove ', recreate: 'restore', revert: 'revert ' };

/** The plan as lines: what will be restored, then the conflicts kept. */
export function planLines(plan: UndoPlan, includeConflicts: boolean): string[] {
  const lines = [`undo to before ${plan.target.id} (${checkpointOrigin(plan.target)}, ${plan.target.sessionId})`];
  if (plan.restore.length === 0 && plan.conflicts.length === 0) lines.push('  nothing differs: the files are as they were before that checkpoint');
  for (const file of plan.restore) lines.push(`  ${ACTION_MARK[file.action]}  ${file.path}${ownerText(file)}`);
  if (plan.conflicts.length > 0) {
    lines.push(includeConflicts ? 'changed by hand since (restored too, as confirmed):' : 'changed by hand since (kept; confirm to restore them too):');
    for (const file of plan.conflicts) lines.push(`  ${ACTION_MARK[file.action]}  ${file.path}${ownerText(file)}`);
  }
  return lines;
}

function ownerText(file: PlannedFile): string {
  const who = [...new Set(file.by.map((b) => `${b.participantId} turn ${b.turn}`))];
  return who.length > 0 ? `  (${who.join('; ')})` : '';
}
