import { createContext } from 'react';
import type { UndoService } from '../../src/checkpoints/undo-service';

/** Undo of the run (docs/undo.md), null when checkpoints are off: the checkpoints modal says so. */
export const UndoContext = createContext<UndoService | null>(null);
