/**
 * Text a model or a tool wrote, made safe to print on a terminal: escape sequences (CSI, and the
 * two-character ESC forms that open OSC, DCS…), C0 control characters but tab and newline, DEL
 * and the whole C1 range (U+0080–U+009F, which terminals act on as OSC, DCS, CSI) are dropped, so
 * no output can move the cursor, retitle the window, write the clipboard (OSC 52) or hide part
 * of a line. The TUI (components/text/ansi.ts) and `legion run` print through it.
 */
const CONTROL = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-_]|[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

export function withoutTerminalControls(text: string): string {
  return text.replace(CONTROL, '');
}
