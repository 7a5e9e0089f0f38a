import { useEffect, useRef, useState } from 'react';

export const SPINNER_MS = 120;

const monotonic = (): number => performance.now();

/**
 * The current spinner frame while `active`, '' otherwise. The frame follows the clock, so any
 * render (a streamed frame, a key) moves it; the interval only forces a render when nothing
 * else drew for a whole spinner period. It exists only while active: an idle app runs no timer.
 */
export function useSpinner(active: boolean, frames: readonly string[], now: () => number = monotonic): string {
  const [, setTick] = useState(0);
  const lastRender = useRef(0);
  const on = active && frames.length > 0;
  lastRender.current = now();
  useEffect(() => {
    if (!on) return;
    const timer = setInterval(() => {
      if (now() - lastRender.current >= SPINNER_MS * 0.8) setTick((t) => t + 1);
    }, SPINNER_MS);
    return () => clearInterval(timer);
  }, [on, now]);
  return on ? frames[Math.floor(now() / SPINNER_MS) % frames.length]! : '';
}
