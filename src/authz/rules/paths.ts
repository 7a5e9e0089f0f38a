import { isAbsolute, posix, relative, sep } from 'node:path';

/**
 * Lexical path normalization for rule matching (no filesystem access): the value an agent
 * passed becomes the workspace-relative POSIX path rules are written against.
 *   `./a` → `a`, `docs/../src/x.ts` → `src/x.ts`, `<root>/src/x.ts` → `src/x.ts`,
 *   `<root>` / `` / `.` → `.`, `src/` → `src`. Unicode is NFC-normalized.
 * A path that leaves the workspace stays recognizable: `../x` or an absolute path.
 */
export function normalizeRulePath(value: string, workspaceRoot: string): string {
  let p = value.normalize('NFC');
  if (p === '') return '.';
  if (isAbsolute(p)) {
    const rel = relative(workspaceRoot, p);
    if (rel === '') return '.';
    if (rel.startsWith('..') || isAbsolute(rel)) return posix.normalize(p.split(sep).join('/'));
    p = rel.split(sep).join('/');
  }
  p = posix.normalize(p);
  if (p.startsWith('./')) p = p.slice(2);
  if (p.length > 1 && p.endsWith('/')) p = p.replace(/\/+$/, '');
  return p === '' ? '.' : p;
}

/**
 * Why a normalized path is outside what tools may touch, or null: absolute paths outside
 * the workspace, `..` escapes, `~` home paths, and anything under `.legion/` (compared
 * case-insensitively, so `.LEGION/x` is refused too). Lexical only; the tools re-check
 * with realpath (docs/design.md#tools), which also catches symlinks.
 */
export function confinementProblem(normalized: string): string | null {
  if (normalized === '..' || normalized.startsWith('../')) return `"${normalized}" is outside the workspace`;
  if (normalized.startsWith('/')) return `"${normalized}" is outside the workspace`;
  if (normalized === '~' || normalized.startsWith('~/')) return `"${normalized}" is outside the workspace`;
  const first = normalized.split('/')[0]!.toLowerCase();
  if (first === '.legion') return `"${normalized}" is inside .legion/, which tools never touch`;
  return null;
}
