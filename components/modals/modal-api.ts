import { createContext, useContext, useEffect } from 'react';
import type { LegionCore, WorkflowCommands } from '../../src/runtime/core-api';
import type { HistorySource } from './history-source';
import type { KeyPress } from '../input/decode-keys';
import type { Keymap } from '../keymap';
import type { Theme } from '../theme';
import type { UiStore } from '../state/store';
import type { ModalState, UiState } from '../state/ui-state';

/**
 * What a modal gets. A modal is a component registered in `modals/registry.ts` for its kind;
 * it draws itself inside `width` × `height` (the lanes' area; the streams keep running
 * behind it) and takes keys with `useModalKeys`. Opening: dispatch
 * `{ type: 'open-modal', modal: { kind } }`; closing: `close()`.
 */
export interface ModalProps {
  readonly modal: ModalState;
  readonly state: UiState;
  readonly width: number;
  readonly height: number;
  readonly theme: Theme;
  readonly keymap: Keymap;
  readonly core: LegionCore;
  /** The history service beside the core, for the history browser. */
  readonly history: HistorySource;
  /** The workflows beside the core, for the new-session dialog. */
  readonly workflows: WorkflowCommands;
  readonly store: UiStore;
  close(): void;
}

/**
 * A modal's key handler: return true when the key was used. Unused keys: Esc (the
 * `interrupt` key) closes the modal, the key that opened it closes it, Ctrl+C counts
 * towards quitting; every other key is swallowed (never typed into the composer).
 */
export type ModalKeyHandler = (key: KeyPress) => boolean;

export interface ModalKeysRegistry {
  set(handler: ModalKeyHandler | null): void;
}

export const ModalKeysContext = createContext<ModalKeysRegistry>({ set: () => undefined });

/** Route keys to the open modal while the component using it is mounted. */
export function useModalKeys(handler: ModalKeyHandler): void {
  const registry = useContext(ModalKeysContext);
  useEffect(() => {
    registry.set(handler);
    return () => registry.set(null);
  }, [registry, handler]);
}
