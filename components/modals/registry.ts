import type { ComponentType } from 'react';
import type { ModalKind } from '../state/ui-state';
import type { ModalProps } from './modal-api';
import { HelpModal } from './HelpModal';
import { PendingModal } from './PendingModal';
import { ApprovalQueue } from './ApprovalQueue';
import { SessionSwitcher } from './SessionSwitcher';
import { NewSession } from './NewSession';
import { HistoryBrowser } from './HistoryBrowser';

/**
 * The screen of each modal kind. Extension point for issue 7: replace `PendingModal` with the
 * approval queue, switcher, new-session and history screens (each a `ModalProps` component
 * taking keys through `useModalKeys`).
 */
export const MODALS: Readonly<Record<ModalKind, ComponentType<ModalProps>>> = {
  help: HelpModal,
  approvals: ApprovalQueue,
  switcher: SessionSwitcher,
  'new-session': NewSession,
  history: HistoryBrowser,
};
