import { createHash } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import { access, realpath, stat } from 'node:fs/promises';
import { delimiter, isAbsolute, relative, resolve, sep } from 'node:path';
import type { McpTransportSpec, StdioDefinition } from './servers';

/** Workspace-relative path (of the link's target when only the target is inside) → sha256 of its content. */
export type DefinitionFiles = Readonly<Record<string, string>>;

/**
 * The workspace files a stdio server definition runs (docs/mcp.md, "Trust"): the command when
 * it resolves into the workspace (a path, or a bare name found on a `PATH` directory inside
 * the workspace), and every argument that names a regular file inside the workspace —
 * `node tools/mcp.js`, `--config=tools/x.json` (the value after `=`), and the words of an
 * argument with spaces (`sh -c "node tools/mcp.js"`). Each is hashed by content, so an agent
 * that rewrites one makes the server untrusted again. Paths count as inside when either the
 * path as written or its target (after symlinks) is inside: a link out of the workspace
 * is as writable as the link. Directories are not hashed (a limit named in the docs).
 * HTTP servers run nothing locally: no files.
 */
export async function definitionFiles(
  transport: StdioDefinition | McpTransportSpec,
  workspaceRoot: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<DefinitionFiles> {
  if (transport.kind !== 'stdio') return {};
  const candidates: string[] = [];
  const command = transport.command;
  if (command.includes('/')) candidates.push(resolve(transport.cwd, command));
  else {
    const found = await onPath(command, transport.env.PATH ?? env.PATH ?? '', transport.cwd);
    if (found) candidates.push(found);
  }
  for (const arg of transport.args) {
    for (const word of wordsOf(arg)) candidates.push(resolve(transport.cwd, word));
  }
  const files: Record<string, string> = {};
  // No cap: the definition is the user's to review, and a file left unhashed would be trusted blindly.
  for (const path of new Set(candidates)) {
    const real = await realpath(path).catch(() => null);
    const key = workspaceKey(path, real, workspaceRoot);
    if (key === null || key in files) continue;
    // A second hard link matters for a file in the workspace (the sandbox cannot link across its
    // mounts, so one outside, a `.venv/bin/python` link's target, has none a command could write).
    const hash = await hashRegularFile(path, real !== null && inside(real, workspaceRoot));
    if (hash !== null) files[key] = hash;
  }
  return files;
}

/** The argument itself, the value of `--name=value`, and the words of an argument with spaces (quotes stripped). */
function wordsOf(arg: string): string[] {
  const words = new Set<string>();
  const add = (w: string): void => {
    const bare = w.replace(/^["']+|["';&|)]+$/g, '');
    if (bare) words.add(bare);
  };
  add(arg);
  const eq = arg.indexOf('=');
  if (arg.startsWith('-') && eq > 0) add(arg.slice(eq + 1));
  if (/\s/.test(arg)) {
    for (const word of arg.split(/\s+/)) {
      add(word);
      const at = word.indexOf('=');
      if (at > 0) add(word.slice(at + 1));
    }
  }
  return [...words];
}

async function onPath(name: string, path: string, cwd: string): Promise<string | null> {
  for (const dir of path.split(delimiter)) {
    const candidate = resolve(cwd, dir || '.', name);
    try {
      await access(candidate, constants.X_OK);
      if ((await stat(candidate)).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

const inside = (path: string, root: string): boolean => {
  const rel = relative(root, path);
  return rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel);
};

/** The key a file is recorded under when it is inside the workspace (as written, or at `real`, its real path), else null. */
function workspaceKey(path: string, real: string | null, root: string): string | null {
  if (inside(path, root)) return relative(root, path);
  if (real !== null && inside(real, root)) return relative(root, real);
  return null;
}

/**
 * What a file with another hard link is recorded as, instead of its hash: never trusted
 * (`filesChanged` names it whatever the approval holds; `linkedFiles` makes an approval refuse).
 * The sandbox binds a trusted script read-only, but a second hard link planted before the
 * approval (`ln tools/mcp.js notes.txt`) is the same file on the writable mount: a sandboxed
 * command would rewrite the script through it between the trust check and the process reading it.
 */
export const HARD_LINKED = 'hard-linked';

async function hashRegularFile(path: string, inWorkspace: boolean): Promise<string | null> {
  try {
    const info = await stat(path);
    if (!info.isFile()) return null;
    if (inWorkspace && info.nlink > 1) return HARD_LINKED;
    const hash = createHash('sha256');
    for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
    return hash.digest('hex');
  } catch {
    return null;
  }
}

/**
 * Why the files differ from what was trusted, as one line naming each file
 * ("tools/mcp.js changed since you trusted it"), or null when they are the same.
 */
export function filesChanged(trusted: DefinitionFiles, now: DefinitionFiles): string | null {
  const parts: string[] = [];
  for (const [path, hash] of Object.entries(now)) {
    if (hash === HARD_LINKED) parts.push(linkedLine(path));
    else if (!(path in trusted)) parts.push(`${path} is new since you trusted it`);
    else if (trusted[path] !== hash) parts.push(`${path} changed since you trusted it`);
  }
  for (const path of Object.keys(trusted)) if (!(path in now)) parts.push(`${path} is gone since you trusted it`);
  return parts.length ? parts.join('; ') : null;
}

/** Why an approval of `files` is refused (one line naming each), or null: a file with another hard link is never approved. */
export function linkedFiles(files: DefinitionFiles): string | null {
  const linked = Object.keys(files).filter((path) => files[path] === HARD_LINKED);
  return linked.length ? linked.map(linkedLine).join('; ') : null;
}

const linkedLine = (path: string): string =>
  `${path} has another hard link (a sandboxed command could rewrite it through that name): replace it with a plain copy (cp ${path} x && mv x ${path})`;
