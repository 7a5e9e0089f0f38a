import { useEffect, useRef } from 'react';
import { useStdin } from 'ink';
import { createKeyDecoder, type KeyPress } from './input/decode-keys';

/**
 * Deliver every key press (named like the keymap, pastes whole) to `handler`.
 * Ink's `useInput` cannot tell F1 or a bracketed paste apart, so this listens to the raw
 * input Ink has already split into sequences. The latest `handler` is always used.
 */
export function useKeys(handler: (key: KeyPress) => void): void {
  const { setRawMode, isRawModeSupported, internal_eventEmitter: emitter } = useStdin();
  const latest = useRef(handler);
  latest.current = handler;
  useEffect(() => {
    if (isRawModeSupported) setRawMode(true);
    const decoder = createKeyDecoder();
    const onInput = (chunk: string): void => {
      for (const key of decoder.feed(chunk)) latest.current(key);
    };
    emitter.on('input', onInput);
    return () => {
      emitter.off('input', onInput);
      if (isRawModeSupported) setRawMode(false);
    };
  }, [emitter, isRawModeSupported, setRawMode]);
}
