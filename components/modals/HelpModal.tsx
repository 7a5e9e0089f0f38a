import React, { useCallback } from 'react';
import { Box, Text } from 'ink';
import type { ModalProps } from './modal-api';
import { useModalKeys } from './modal-api';
import { formatKey } from '../keymap';
import { lineToAnsi } from '../text/ansi';
import { truncate } from '../text/width';
import type { Line } from '../text/line';

/** Keys that are not in the keymap (composer editing), listed after it. */
const EDITING: readonly [string, string][] = [
  ['↑ / ↓', 'previous / next sent message (on an empty message), else move between lines'],
  ['@name Tab', 'complete a participant name'],
  ['Ctrl+A / Ctrl+E', 'start / end of the line'],
  ['Ctrl+U / Ctrl+K / Ctrl+W', 'delete to line start / to line end / the word before'],
];

/** The effective keymap (after `keymap:` overrides), then the composer's editing keys. */
export function HelpModal({ keymap, theme, width, height, close }: ModalProps) {
  useModalKeys(useCallback((key) => {
    if (key.name === 'q') { close(); return true; }
    return false;
  }, [close]));
  const inner = Math.max(10, width - 4);
  const keyWidth = Math.min(28, Math.max(...keymap.entries.map((e) => e.keys.map(formatKey).join(', ').length), 16) + 2);
  const lines: Line[] = [[{ text: 'Keys', bold: true, tone: 'heading' }], []];
  for (const entry of keymap.entries) {
    const keys = entry.keys.length ? entry.keys.map(formatKey).join(', ') : '(unbound)';
    lines.push([{ text: keys.padEnd(keyWidth), tone: 'accent' }, { text: truncate(entry.description, inner - keyWidth) }]);
  }
  lines.push([], [{ text: 'Composer', bold: true, tone: 'heading' }], []);
  for (const [keys, what] of EDITING) lines.push([{ text: keys.padEnd(keyWidth), tone: 'accent' }, { text: truncate(what, inner - keyWidth) }]);
  lines.push([], [{ text: 'Esc closes. Keys can be changed under keymap: in .legion/config.yaml.', tone: 'muted' }]);
  const visible = lines.slice(0, Math.max(0, height - 2));
  return (
    <Box flexDirection="column" width={width} height={height} borderStyle={theme.plain ? undefined : 'round'} paddingX={theme.plain ? 0 : 1}>
      {visible.map((line, i) => <Text key={i}>{lineToAnsi(line, theme) || ' '}</Text>)}
    </Box>
  );
}
