import vm from 'node:vm';

/** Time one batch of lines may take before the pattern is declared too slow. */
export const REGEX_BATCH_TIMEOUT_MS = 3000;

export type RegexCompile =
  | { readonly ok: true; readonly regex: RegExp }
  | { readonly ok: false; readonly error: string };

export function compileRegex(pattern: string, ignoreCase: boolean): RegexCompile {
  try {
    return { ok: true, regex: new RegExp(pattern, ignoreCase ? 'i' : '') };
  } catch (error) {
    return { ok: false, error: (error as Error).message.replace(/^Invalid regular expression: /, '') };
  }
}

export type BatchMatch =
  | { readonly ok: true; readonly matches: number[] }
  | { readonly ok: false; readonly error: string };

/**
 * Runs a regex over batches of lines under a watchdog: a pattern that backtracks
 * catastrophically is stopped after `timeoutMs` (V8 interrupts regex execution inside a
 * `vm` script with a timeout) instead of freezing the process forever.
 */
export function createRegexRunner(regex: RegExp, timeoutMs = REGEX_BATCH_TIMEOUT_MS): (lines: readonly string[]) => BatchMatch {
  const sandbox = { re: regex, batch: [] as readonly string[], out: [] as number[] };
  const context = vm.createContext(sandbox);
  const script = new vm.Script('out = []; for (let i = 0; i < batch.length; i++) { re.lastIndex = 0; if (re.test(batch[i])) out.push(i); }');
  return (lines) => {
    sandbox.batch = lines;
    try {
      script.runInContext(context, { timeout: timeoutMs });
    } catch (error) {
      const message = (error as Error).message ?? String(error);
      if (/timed out/i.test(message)) {
        return { ok: false, error: `the pattern took longer than ${timeoutMs} ms on one batch of lines (catastrophic backtracking?); simplify it` };
      }
      return { ok: false, error: `matching failed: ${message}` };
    }
    const out = (context as { out: number[] }).out;
    return { ok: true, matches: Array.from(out) };
  };
}
