import React from 'react';
import { Box, Text } from 'ink';
import type { ModalProps } from './modal-api';

const TITLES = {
  help: 'Help', approvals: 'Approval queue', switcher: 'Session switcher', 'new-session': 'New session', history: 'History',
} as const;

/** Stand-in for a modal kind that has no screen in this build yet (issue 7 replaces these). */
export function PendingModal({ modal, width, height, theme, state }: ModalProps) {
  const pending = Object.keys(state.pending).length;
  return (
    <Box flexDirection="column" width={width} height={height} borderStyle={theme.plain ? undefined : 'round'} paddingX={theme.plain ? 0 : 1}>
      <Text bold>{TITLES[modal.kind]}</Text>
      <Text>This screen is not available in this build yet.</Text>
      {modal.kind === 'approvals' ? <Text>{`${pending} request${pending === 1 ? '' : 's'} pending.`}</Text> : null}
      <Text>Esc closes.</Text>
    </Box>
  );
}
