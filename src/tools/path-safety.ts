import { realpath, lstat, readlink } from 'node:fs/promises';
import { isAbsolute, resolve, relative, dirname, basename, join, sep } from 'node:path';

/**
 * Workspace confinement (docs/design.md#tools), a hard invariant that runs before any rule.
 *
 * `resolveWorkspacePath(root, input)` accepts a path only when, after resolving it the way
 * the OS would (symlinks included, also for the not-yet-existing tail of a path under a
 * symlinked or dangling-symlinked directory), it stays inside the realpath'd workspace root
 * and touches nothing under a `.legion` directory. It refuses, with a one-line reason:
 * - empty-after-trim, over-long (> 4096 chars), NUL-containing paths;
 * - paths starting with `~` (no home expansion: the model must say what it means);
 * - absolute paths outside the root and `..` escapes;
 * - symlinks that lead out, symlink loops;
 * - any segment that names `.legion` in any spelling a filesystem might treat as the same
 *   (case, Unicode NFC/NFD/NFKC forms, diacritics, ignorable code points, trailing dots/spaces,
 *   NTFS stream suffixes, 8.3 short names), in the raw input or in the resolved path.
 *
 * `absolute` is the fully resolved path (symlinks followed) to operate on; `relative` is
 * the same path relative to the root with `/` separators (`.` for the root itself), the
 * form rules match. A check is only valid at the time it is made: writers call it again
 * right before they write (see confined-write.ts).
 */
export type PathResolution =
  | { readonly ok: true; readonly absolute: string; readonly relative: string }
  | { readonly ok: false; readonly error: string };

export const MAX_PATH_LENGTH = 4096;
const MAX_SYMLINK_HOPS = 40;

/** True when `path` (relative or absolute, any separators) has a segment naming a `.legion` directory. */
export function isUnderLegionDir(path: string): boolean {
  return path.split(/[\\/]+/).some(isLegionSegment);
}

/** True when one path segment could designate `.legion` on some filesystem. */
export function isLegionSegment(segment: string): boolean {
  if (segment.length === 0) return false;
  const folded = foldSegment(segment);
  return folded === '.legion' || /^legion~\d+$/.test(folded) || /^\.legion~\d+$/.test(folded);
}

/** Case-, normalization- and Windows-alias-insensitive form of a segment. */
function foldSegment(segment: string): string {
  let s = segment.normalize('NFKC').replace(/\p{Default_Ignorable_Code_Point}/gu, '');
  // Case folding both ways (ı→I→i, ſ→S→s), then diacritics dropped (İ→i̇→i): over-refusing
  // `.légion` is fine, missing a spelling some filesystem equates with `.legion` is not.
  s = s.toLowerCase().toUpperCase().toLowerCase().normalize('NFKD').replace(/\p{M}/gu, '');
  const colon = s.indexOf(':');
  if (colon > 0) s = s.slice(0, colon); // NTFS alternate data streams: ".legion::$DATA"
  return s.replace(/[. ]+$/, ''); // Windows strips trailing dots and spaces
}

function toPosix(rel: string): string {
  return sep === '/' ? rel : rel.split(sep).join('/');
}

function isOutside(rel: string): boolean {
  return rel === '..' || rel.startsWith('..' + sep) || isAbsolute(rel);
}

function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * The path the OS would reach through `p`, following every symlink, including dangling
 * ones and the ones above a not-yet-existing tail.
 */
async function resolveReal(p: string, hops: number): Promise<string> {
  if (hops > MAX_SYMLINK_HOPS) throw Object.assign(new Error('too many symlinks'), { code: 'ELOOP' });
  try {
    return await realpath(p);
  } catch (error) {
    const code = errnoOf(error);
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
  }
  const parent = dirname(p);
  if (parent === p) return p;
  let stat;
  try {
    stat = await lstat(p);
  } catch {
    stat = undefined;
  }
  if (stat?.isSymbolicLink()) {
    const target = await readlink(p);
    return resolveReal(resolve(parent, target), hops + 1);
  }
  return join(await resolveReal(parent, hops), basename(p));
}

export async function resolveWorkspacePath(root: string, inputPath: string): Promise<PathResolution> {
  if (typeof inputPath !== 'string') return { ok: false, error: 'path must be a string' };
  if (inputPath.length > MAX_PATH_LENGTH) {
    return { ok: false, error: `path is too long (${inputPath.length} characters; at most ${MAX_PATH_LENGTH})` };
  }
  if (inputPath.includes('\0')) return { ok: false, error: 'path contains a NUL byte' };
  const input = inputPath === '' ? '.' : inputPath;
  if (input.trim() === '') return { ok: false, error: 'path is blank' };
  if (input.startsWith('~')) {
    return { ok: false, error: `path "${clip(input)}" starts with "~": home expansion is not supported; give a path relative to the workspace` };
  }
  // Relative input: any `.legion` segment refuses, even one a later `..` would cancel.
  if (!isAbsolute(input) && isUnderLegionDir(input)) return { ok: false, error: legionRefusal(input) };

  let realRoot: string;
  try {
    realRoot = await realpath(root);
  } catch (error) {
    return { ok: false, error: `workspace root ${root} is not accessible (${errnoOf(error) ?? 'error'})` };
  }

  let lexical: string;
  if (isAbsolute(input)) {
    lexical = resolve(input);
    const viaGivenRoot = relative(resolve(root), lexical);
    if (!isOutside(viaGivenRoot)) lexical = resolve(realRoot, viaGivenRoot);
  } else {
    lexical = resolve(realRoot, input);
  }
  const lexicalRel = relative(realRoot, lexical);
  if (isOutside(lexicalRel)) return { ok: false, error: outsideRefusal(input) };
  if (isUnderLegionDir(lexicalRel)) return { ok: false, error: legionRefusal(input) };

  let real: string;
  try {
    real = await resolveReal(lexical, 0);
  } catch (error) {
    const code = errnoOf(error);
    if (code === 'ELOOP') return { ok: false, error: `path "${clip(input)}" runs into a symlink loop` };
    return { ok: false, error: `cannot resolve "${clip(input)}" (${code ?? (error as Error).message})` };
  }
  const realRel = relative(realRoot, real);
  if (isOutside(realRel)) {
    return { ok: false, error: `path "${clip(input)}" leads outside the workspace through a symlink; refused` };
  }
  if (isUnderLegionDir(realRel)) return { ok: false, error: legionRefusal(input) };
  return { ok: true, absolute: real, relative: realRel === '' ? '.' : toPosix(realRel) };
}

/** Whether a fully resolved path lies strictly inside `realRoot` and outside every `.legion`. */
export function isInsideWorkspace(realRoot: string, realPath: string): boolean {
  const rel = relative(realRoot, realPath);
  return rel !== '' && !isOutside(rel) && !isUnderLegionDir(rel);
}

/** The realpath'd workspace root, given a resolution's `absolute` and `relative`. */
export function rootOf(absolute: string, relativePath: string): string {
  if (relativePath === '.') return absolute;
  const depth = relativePath.split('/').length;
  let root = absolute;
  for (let i = 0; i < depth; i += 1) root = dirname(root);
  return root;
}

function legionRefusal(input: string): string {
  return `path "${clip(input)}" is inside .legion/ (Legion's own state); tools may not touch it`;
}

function outsideRefusal(input: string): string {
  return `path "${clip(input)}" is outside the workspace; only paths inside the workspace are allowed`;
}

/** A path quoted in an error message, shortened so a huge input cannot flood the result. */
export function clip(text: string, max = 200): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`;
}
