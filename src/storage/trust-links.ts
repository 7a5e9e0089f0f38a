import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The files through which a trusted `.legion/` grants (docs/workspace-trust.md#an-untrusted-workspace),
 * relative to it; `*` is any name (`*.json`: any ending so). Once trusted, the sandbox hides and pins the folder, so nothing
 * in it can be changed by a command; a link planted before (a symbolic link to a file of the
 * workspace, a second hard link elsewhere in it) would still be: the rules would change through it.
 */
const GRANTING = ['config.yaml', 'rules.yaml', 'models.yaml', 'engine/engine.json', 'collective/participants/*.json', 'runs/*/allowances.jsonl'];

/**
 * The granting files of `legionDir` that are symbolic links, lie under a folder that is one, or
 * have another hard link (relative paths, sorted). Empty: what `legion trust` lists is what it
 * trusts. Missing files are not reported.
 */
export function linkedGrantingFiles(legionDir: string): string[] {
  const found = new Set<string>();
  const walk = (dir: string, rel: string, rest: readonly string[]): void => {
    const [head, ...tail] = rest;
    if (head === undefined) return;
    // `*` and `*.json`: every name of the folder with that ending.
    const names = head.startsWith('*') ? listNames(dir).filter((name) => name.endsWith(head.slice(1))) : [head];
    for (const name of names) {
      const path = join(dir, name);
      const relPath = rel ? `${rel}/${name}` : name;
      let stats;
      try {
        stats = lstatSync(path);
      } catch {
        continue;
      }
      if (stats.isSymbolicLink()) found.add(relPath);
      else if (tail.length === 0) {
        if (stats.isFile() && stats.nlink > 1) found.add(relPath);
      } else if (stats.isDirectory()) walk(path, relPath, tail);
    }
  };
  for (const pattern of GRANTING) walk(legionDir, '', pattern.split('/'));
  return [...found].sort();
}

function listNames(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
