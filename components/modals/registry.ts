import type { ComponentType } from 'react';
import type { ModalKind } from '../state/ui-state';
import type { ModalProps } from './modal-api';
import { HelpModal } from './HelpModal';
import { ApprovalQueue } from './ApprovalQueue';
import { SessionSwitcher } from './SessionSwitcher';
import { NewSession } from './NewSession';
import { HistoryBrowser } from './HistoryBrowser';
import { CheckpointsModal } from './CheckpointsModal';

/**
 * The screen of each modal kind: a `ModalProps` component taking keys through `useModalKeys`.
 * A new modal kind adds its entry here (the record is exhaustive over `ModalKind`).
 */
export const MODALS: Readonly<Record<ModalKind, ComponentType<ModalProps>>> = {
  help: HelpModal,
  approvals: ApprovalQueue,
  switcher: SessionSwitcher,
  'new-session': NewSession,
  history: HistoryBrowser,
  checkpoints: CheckpointsModal,
};
