import { isAbsolute, posix, relative, sep } from 'node:path';

/**
 * Lexical path normalization for rule matching (no filesystem access): the value an agent
 * passed becomes the workspace-relative POSIX path rules are written against.
 *   `./a` → `a`, `docs/../src/x.ts` → `src/x.ts`, `<root>/src/x.ts` → `src/x.ts`,
 *   `<root>` / `` / `.` → `.`, `src/` → `src`. Unicode is NFC-normalized.
 * A path that leaves the workspace stays recognizable: `../x` or an absolute path.
 */
export function normalizeRulePath(value: string, workspaceRoot: string): string {
  // Most values (`src/main.ts`, `package.json`) are already what the steps below would return.
  if (isNormalRelative(value)) return value;
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
 * Whether `p` is its own normalizeRulePath: ASCII (so NFC leaves it as it is), relative, and
 * made of segments none of which is empty, `.` or `..` (so posix.normalize leaves it too, and
 * it has no `./` to drop nor a trailing `/`). A test compares it with the steps on generated paths.
 */
export function isNormalRelative(p: string): boolean {
  let start = 0;
  for (let i = 0; i <= p.length; i++) {
    const c = i < p.length ? p.charCodeAt(i) : 0x2f;
    if (c >= 0x80) return false;
    if (c !== 0x2f) continue;
    const length = i - start;
    // An empty segment: `` itself, a leading `/` (absolute), `//` or a trailing `/`.
    if (length === 0) return false;
    if (p.charCodeAt(start) === 0x2e && (length === 1 || (length === 2 && p.charCodeAt(start + 1) === 0x2e))) return false;
    start = i + 1;
  }
  return true;
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
  // The first segment, without an array of all of them.
  const slash = normalized.indexOf('/');
  const first = (slash === -1 ? normalized : normalized.slice(0, slash)).toLowerCase();
  if (first === '.legion') return `"${normalized}" is inside .legion/, which tools never touch`;
  return null;
}
