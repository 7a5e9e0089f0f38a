import { writeSync } from 'node:fs';

/** Alternate screen on, bracketed paste on, cursor home. */
export const ENTER_SEQUENCE = '\x1b[?1049h\x1b[?2004h\x1b[H\x1b[2J';
/** Bracketed paste off, cursor shown, alternate screen off (the shell's screen comes back). */
export const LEAVE_SEQUENCE = '\x1b[?2004l\x1b[?25h\x1b[?1049l';

export interface TerminalModes {
  enter(): void;
  /** Restore the terminal; safe to call any number of times, also from an `exit` handler. */
  leave(): void;
  /** Forget the modes without writing (the terminal is gone). */
  abandon(): void;
  readonly active: boolean;
}

/**
 * The full-screen modes of the TUI. `leave` writes synchronously (fd write) so it also works
 * in `process.on('exit')` and after a crash, when streams may not flush any more.
 */
export function terminalModes(fd: number, write: (text: string) => void = (t) => void writeSync(fd, t)): TerminalModes {
  let active = false;
  return {
    get active() { return active; },
    enter() {
      if (active) return;
      active = true;
      write(ENTER_SEQUENCE);
    },
    leave() {
      if (!active) return;
      active = false;
      try { write(LEAVE_SEQUENCE); } catch { /* the terminal is gone */ }
    },
    abandon() {
      active = false;
    },
  };
}
