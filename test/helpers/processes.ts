import { readFileSync } from 'node:fs';

/** Whether `pid` is gone: no such process, or a zombie (dead, waiting to be reaped by whoever adopted it). */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/**
 * Resolve once `check()` is true, polling every `everyMs`; reject after `safetyMs` (a safety
 * net for a broken build, not a performance assertion: keep it generous).
 */
export async function until(check: () => boolean, what: string, safetyMs = 15_000, everyMs = 10): Promise<void> {
  const deadline = Date.now() + safetyMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
