import { useEffect, useState } from 'react';

export const SPINNER_MS = 120;

/**
 * The current spinner frame while `active`, '' otherwise. The interval exists only while
 * active, so an idle app runs no timer.
 */
export function useSpinner(active: boolean, frames: readonly string[]): string {
  const [index, setIndex] = useState(0);
  const on = active && frames.length > 0;
  useEffect(() => {
    if (!on) return;
    const timer = setInterval(() => setIndex((i) => (i + 1) % frames.length), SPINNER_MS);
    return () => clearInterval(timer);
  }, [on, frames.length]);
  return on ? frames[index % frames.length]! : '';
}
