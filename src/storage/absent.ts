import { statSync } from 'node:fs';

/**
 * True only when `path` surely does not exist: a synchronous `stat` (which follows links, as
 * a read does) answers ENOENT, without an error object. Any other answer is false (it
 * exists, or the stat failed otherwise, e.g. EACCES or ENOTDIR): the caller's read then runs
 * and reports what it reports.
 *
 * For the optional files a start looks for and mostly does not find (config, rules, models,
 * hooks, MCP and agent files, a run's approvals, allowances and usage): a promised read of a
 * missing file is a round trip through libuv's thread pool and a rejected promise carrying an
 * error with its stack, ~0.1 ms each, ~20 of them before the first frame (docs/performance.md#start-up);
 * a failed `stat` is a few microseconds on the main thread.
 */
export function surelyAbsent(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false }) === undefined;
  } catch {
    return false;
  }
}
