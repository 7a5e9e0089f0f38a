import React, { useMemo, type ReactNode } from 'react';
import type { LegionCore } from '../../src/runtime/core-api';
import { ApprovalServicesContext, approvalServicesFor } from './approval-services';
import { HistorySourceContext, createHistorySource } from './history-source';
import { UndoContext } from './undo-context';
import type { UndoService } from '../../src/checkpoints/undo-service';

export interface ModalServicesProps {
  readonly workspaceRoot: string;
  readonly core: LegionCore;
  /** Resume another run (start-tui); absent: older runs are read-only in the history browser. */
  readonly switchRun?: (runId: string, sessionId?: string) => void;
  /** Checkpoints and undo of the run (absent: off). */
  readonly undo?: UndoService;
  readonly children: ReactNode;
}

/** What the modals read: diff previews from the workspace, the run history through the core. */
export function ModalServices({ workspaceRoot, core, switchRun, undo, children }: ModalServicesProps) {
  const approvals = useMemo(() => approvalServicesFor(workspaceRoot), [workspaceRoot]);
  const history = useMemo(
    () => createHistorySource({ core, ...(switchRun ? { switchRun } : {}) }),
    [core, switchRun],
  );
  return (
    <ApprovalServicesContext.Provider value={approvals}>
      <HistorySourceContext.Provider value={history}>
        <UndoContext.Provider value={undo ?? null}>{children}</UndoContext.Provider>
      </HistorySourceContext.Provider>
    </ApprovalServicesContext.Provider>
  );
}
