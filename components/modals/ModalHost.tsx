import React from 'react';
import type { ModalProps } from './modal-api';
import { MODALS } from './registry';

/** Draws the open modal (from the registry) in the lanes' area. */
export function ModalHost(props: ModalProps) {
  const Screen = MODALS[props.modal.kind];
  return <Screen {...props} />;
}
