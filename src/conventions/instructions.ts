import { lstatSync, realpathSync, type Stats } from 'node:fs';
import { readCheckedFileSync } from '../tools/text-file';
import { join, relative, isAbsolute, sep } from 'node:path';

/** Bytes of one instructions file included in a prompt; the rest is cut with a notice (docs/conventions.md). */
export const INSTRUCTIONS_MAX_BYTES = 32 * 1024;
/** The workspace's instructions file: the first of these that exists (`instructions.files`). */
export const DEFAULT_INSTRUCTION_FILES: readonly string[] = ['AGENTS.md', 'CLAUDE.md', 'GEMINI.md'];

export interface InstructionsFile {
  /** Absolute path. */
  readonly file: string;
  /** Where it came from, as the prompt's heading says it ("the workspace", "your user configuration"). */
  readonly origin: string;
  readonly bytes: number;
  readonly text: string;
  readonly cut: boolean;
}

/** Why a workspace file may not be read into a prompt (a secret path), or null. */
export type RefusePath = (workspaceRelative: string) => string | null;

export interface InstructionsDeps {
  readonly workspaceRoot: string;
  /** The user's config folder (`~/.config/legion`): its `AGENTS.md` is read too. */
  readonly userDir: string;
  /** `instructions.files`: names tried in order at the workspace root (and for nested folders). */
  readonly files: readonly string[];
  /** Required: a configured name that is a secret path (a `.env` named by a hostile config) is never read. */
  readonly refuse: RefusePath;
  /** Said once per change of a file: it was cut, or could not be read. */
  readonly notice: (level: 'info' | 'warn', message: string) => void;
}

/**
 * The project instructions in every agent's system prompt. `section()` is called once per
 * model request: it `lstat`s the candidate files (a few syscalls) and re-reads a file only
 * when its size, mtime or inode changed, so an edited AGENTS.md reaches the next request and
 * an unchanged one costs no read. A file that is a symbolic link leading out of the workspace,
 * or not a regular file, is refused with a notice.
 */
export interface ProjectInstructions {
  section(): string;
  /** The files currently included (for `legion doctor`). */
  current(): InstructionsFile[];
}

interface Cached { readonly key: string; readonly value: InstructionsFile | null }

export function createProjectInstructions(deps: InstructionsDeps): ProjectInstructions {
  const cache = new Map<string, Cached>();
  let lastSection = '';
  let lastFiles: readonly InstructionsFile[] = [];

  const load = (file: string, origin: string, inWorkspace: boolean): InstructionsFile | null | undefined => {
    let stat: Stats | undefined;
    try {
      stat = lstatSync(file, { throwIfNoEntry: false });
    } catch {
      stat = undefined;
    }
    if (stat === undefined) {
      cache.delete(file);
      return undefined;
    }
    const key = `${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.mode}`;
    const hit = cache.get(file);
    if (hit && hit.key === key) return hit.value;
    const value = readChecked(file, origin, stat, inWorkspace ? deps.workspaceRoot : null, deps);
    cache.set(file, { key, value });
    return value;
  };

  const current = (): InstructionsFile[] => {
    const out: InstructionsFile[] = [];
    for (const name of deps.files) {
      const got = load(join(deps.workspaceRoot, name), 'the workspace', true);
      if (got === undefined) continue;
      if (got) out.push(got);
      break;
    }
    const user = load(join(deps.userDir, 'AGENTS.md'), 'your user configuration', false);
    if (user) out.push(user);
    return out;
  };

  return {
    current,
    section() {
      // A file re-read is a new object: the section is rebuilt only then.
      const files = current();
      if (files.length === lastFiles.length && files.every((f, i) => f === lastFiles[i])) return lastSection;
      lastFiles = files;
      lastSection = files.map(formatFile).join('\n\n');
      return lastSection;
    },
  };
}

function formatFile(f: InstructionsFile): string {
  const cut = f.cut ? `\n[cut: ${f.file} is ${f.bytes} bytes; only the first ${INSTRUCTIONS_MAX_BYTES} are included]` : '';
  return `# Instructions from ${f.origin} (${f.file})\n${f.text.trimEnd()}${cut}`;
}

/** Read a file for a prompt: a regular file (or a link staying inside `root`), capped. */
export function readChecked(
  file: string, origin: string, stat: Stats, root: string | null, deps: Pick<InstructionsDeps, 'refuse' | 'notice'>,
): InstructionsFile | null {
  const refused = (why: string): null => {
    deps.notice('warn', `${file}: not included in the agents' instructions: ${why}`);
    return null;
  };
  // The real path, link or not (the checked read below compares the opened file with it).
  let real: string;
  try {
    real = realpathSync(file);
  } catch {
    return refused(stat.isSymbolicLink() ? 'a broken symbolic link' : 'unreadable');
  }
  if (stat.isSymbolicLink() && root !== null && insideOf(root, real) === null) return refused('a symbolic link leading out of the workspace');
  if (root !== null) {
    const rel = insideOf(root, real);
    const why = rel === null ? 'outside the workspace' : deps.refuse(rel);
    if (why) return refused(why);
  }
  let buffer: Buffer;
  try {
    // Checked: a link or a folder swapped in since the checks above (a sandboxed command may be
    // swapping them meanwhile) fails the read instead of leading it elsewhere.
    buffer = readCheckedFileSync(real);
  } catch (error) {
    return refused((error as NodeJS.ErrnoException).code ?? 'unreadable');
  }
  const cut = buffer.length > INSTRUCTIONS_MAX_BYTES;
  let text = (cut ? buffer.subarray(0, INSTRUCTIONS_MAX_BYTES) : buffer).toString('utf8');
  if (cut) {
    text = text.replace(/\uFFFD+$/, '');
    deps.notice('warn', `${file} is ${buffer.length} bytes: only its first ${INSTRUCTIONS_MAX_BYTES} bytes are in the agents' instructions`);
  }
  return { file, origin, bytes: buffer.length, text, cut };
}

/** `path` relative to `root` with forward slashes ('' for the root itself), or null when outside. */
export function insideOf(root: string, path: string): string | null {
  let realRoot = root;
  try {
    realRoot = realpathSync(root);
  } catch { /* keep */ }
  const rel = relative(realRoot, path);
  if (rel.startsWith('..') || isAbsolute(rel)) return null;
  return rel.split(sep).join('/');
}
