import { clip } from './path-safety';

export const MAX_PATTERN_LENGTH = 1000;

/**
 * A glob pattern must stay relative to its search directory: no absolute patterns, no
 * `..` segments, no `~`, no NUL. Returns an error message or undefined.
 */
export function globPatternProblem(pattern: string, field = 'pattern'): string | undefined {
  if (pattern.length === 0) return `${field} is empty`;
  if (pattern.length > MAX_PATTERN_LENGTH) return `${field} is too long (${pattern.length} characters; at most ${MAX_PATTERN_LENGTH})`;
  if (pattern.includes('\0')) return `${field} contains a NUL byte`;
  if (pattern.startsWith('/') || pattern.startsWith('\\') || /^[A-Za-z]:/.test(pattern)) {
    return `${field} "${clip(pattern)}" is absolute; give a pattern relative to the search directory (use path to choose the directory)`;
  }
  if (pattern.startsWith('~')) return `${field} "${clip(pattern)}" starts with "~": home expansion is not supported`;
  if (pattern.split(/[\\/]/).some((s) => s === '..' || /^\{?\.\.[,}]/.test(s) || /[{,]\.\.[,}]/.test(s))) {
    return `${field} "${clip(pattern)}" contains ".."; patterns cannot leave the search directory`;
  }
  return undefined;
}
