import { lstatSync } from 'node:fs';
import { join, posix } from 'node:path';
import { readChecked, type InstructionsDeps } from './instructions';

/** The first line of a nested-instructions note; how a session's history shows which folders it already got. */
const MARKER = 'Instructions for the folder ';
const MARKER_RE = /^Instructions for the folder (\S+)\/ \(/;

export interface NestedInstructions {
  /**
   * Notes for an agent whose file tools just touched `paths` (workspace-relative): for each
   * folder on the way to them (the root excluded: its file is in the system prompt) whose
   * instructions file this session has not been given, one note with the file's text.
   * `history` is the session's text so far (read once per session, to know what it already got).
   */
  notesFor(sessionId: string, paths: readonly string[], history: () => readonly string[], root?: string): string[];
}

export function createNestedInstructions(deps: Omit<InstructionsDeps, 'userDir'>): NestedInstructions {
  const given = new Map<string, Set<string>>();
  const seen = (sessionId: string, history: () => readonly string[]): Set<string> => {
    let set = given.get(sessionId);
    if (!set) {
      set = new Set();
      for (const text of history()) {
        const match = MARKER_RE.exec(text);
        if (match) set.add(match[1]!);
      }
      given.set(sessionId, set);
    }
    return set;
  };

  return {
    notesFor(sessionId, paths, history, root) {
      const notes: string[] = [];
      let set: Set<string> | undefined;
      for (const path of paths) {
        for (const folder of foldersOf(path)) {
          set ??= seen(sessionId, history);
          if (set.has(folder)) continue;
          set.add(folder);
          const note = noteFor(folder, root ? { ...deps, workspaceRoot: root } : deps);
          if (note) notes.push(note);
        }
      }
      return notes;
    },
  };
}

/** The folders from the top down to the one holding `path` (or `path` itself when it is a folder), root excluded. */
export function foldersOf(path: string): string[] {
  const normal = posix.normalize(path.replace(/\\/g, '/')).replace(/\/+$/, '');
  if (normal === '' || normal === '.' || normal === '..' || normal.startsWith('../') || normal.startsWith('/')) return [];
  const parts = normal.split('/');
  const out: string[] = [];
  for (let i = 1; i <= parts.length; i++) out.push(parts.slice(0, i).join('/'));
  return out;
}

function noteFor(folder: string, deps: Omit<InstructionsDeps, 'userDir'>): string | null {
  const dir = join(deps.workspaceRoot, folder);
  try {
    if (!lstatSync(dir).isDirectory()) return null;
  } catch {
    return null;
  }
  for (const name of deps.files) {
    const file = join(dir, name);
    let stat;
    try {
      stat = lstatSync(file);
    } catch {
      continue;
    }
    const got = readChecked(file, `the folder ${folder}/`, stat, deps.workspaceRoot, deps);
    if (!got) return null;
    const cut = got.cut ? `\n[cut: only the first part of ${got.bytes} bytes]` : '';
    return `${MARKER}${folder}/ (${folder}/${name}); they apply to files under ${folder}/:\n${got.text.trimEnd()}${cut}`;
  }
  return null;
}
