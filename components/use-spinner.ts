import { useEffect, useRef, useState } from 'react';

export const SPINNER_MS = 120;

const monotonic = (): number => performance.now();

/**
 * The current spinner frame while `active`, '' otherwise. The frame follows the clock: the
 * component renders again when the clock's frame is not the one it last rendered, checked each
 * time `frames` notifies (the UI store's frames: a streamed frame that crosses a spinner period
 * moves the spinner in the same render, even when it renders only a lane) and every
 * `SPINNER_MS` (when nothing else draws). The interval exists only while active: an idle app
 * runs no timer.
 */
export function useSpinner(active: boolean, glyphs: readonly string[], now: () => number = monotonic, frames?: (listener: () => void) => () => void): string {
  const [, setTick] = useState(0);
  const rendered = useRef(-1);
  const on = active && glyphs.length > 0;
  const index = Math.floor(now() / SPINNER_MS);
  rendered.current = index;
  useEffect(() => {
    if (!on) return;
    const check = (): void => {
      if (Math.floor(now() / SPINNER_MS) !== rendered.current) setTick((t) => t + 1);
    };
    const timer = setInterval(check, SPINNER_MS);
    const unsubscribe = frames?.(check);
    return () => {
      clearInterval(timer);
      unsubscribe?.();
    };
  }, [on, now, frames]);
  return on ? glyphs[index % glyphs.length]! : '';
}
