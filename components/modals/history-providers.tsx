import React, { useMemo, type ReactNode } from 'react';
import { ApprovalServicesContext, approvalServicesFor } from './approval-services';
import { UndoContext } from './undo-context';
import type { UndoService } from '../../src/checkpoints/undo-service';

export interface ModalServicesProps {
  readonly workspaceRoot: string;
  /** Checkpoints and undo of the run (absent: off). */
  readonly undo?: UndoService;
  readonly children: ReactNode;
}

/** What the modals read beside the core: diff previews from the workspace, undo. (History and workflows are `App` props.) */
export function ModalServices({ workspaceRoot, undo, children }: ModalServicesProps) {
  const approvals = useMemo(() => approvalServicesFor(workspaceRoot), [workspaceRoot]);
  return (
    <ApprovalServicesContext.Provider value={approvals}>
      <UndoContext.Provider value={undo ?? null}>{children}</UndoContext.Provider>
    </ApprovalServicesContext.Provider>
  );
}
