import { lstatSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { surelyAbsent } from '../storage/absent';
import { readdir, realpath, stat } from 'node:fs/promises';
import { openCheckedForRead } from '../tools/text-file';
import { join, relative, sep, isAbsolute } from 'node:path';
import type { SkillCatalog, SkillEntry } from '../tools/builtin/skill';
import { parseFrontMatter } from './front-matter';
import { insideOf, type RefusePath } from './instructions';

/** Bytes of a SKILL.md body or of one skill file the `skill` tool returns. */
const SKILL_MAX_BYTES = 256 * 1024;
/** Files listed beside a SKILL.md. */
const MAX_LISTED = 100;
const NAME = /^[a-z0-9][a-z0-9-]{0,63}$/;

export interface SkillRoot {
  readonly dir: string;
  /** Said in `legion doctor` ("the workspace", ".claude/skills", "your user configuration"). */
  readonly origin: string;
}

/** The folders skills are found in, the first winning on a shared name (docs/conventions.md#skills). */
export function skillRoots(workspaceRoot: string, userDir: string): SkillRoot[] {
  return [
    { dir: join(workspaceRoot, '.legion', 'skills'), origin: 'the workspace (.legion/skills)' },
    { dir: join(workspaceRoot, '.claude', 'skills'), origin: 'the workspace (.claude/skills)' },
    { dir: join(userDir, 'skills'), origin: 'your user configuration' },
  ];
}

export interface Skills extends SkillCatalog {
  /** The system prompt's list of skills ('' when none); `holdsTool`: the agent may call `skill`. */
  section(holdsTool: boolean): string;
  /** One line per SKILL.md that did not load. */
  problems(): readonly string[];
}

/** `realDirs`: each skill's folder as it resolved when it was found (a real directory then): where its files must lie. */
interface Found { readonly key: string; readonly skills: SkillEntry[]; readonly problems: string[]; readonly realDirs: ReadonlyMap<string, string> }

/**
 * The skills of the roots: every `<root>/<folder>/SKILL.md` with front matter `name` (default:
 * the folder's name) and `description`. Found again when a root's or a SKILL.md's stat changes
 * (a few stats per request, no read when nothing changed). Reads stay inside a skill's folder.
 */
export function createSkills(roots: readonly SkillRoot[], guard: { readonly workspaceRoot: string; readonly refuse: RefusePath }): Skills {
  let found: Found = { key: '', skills: [], problems: [], realDirs: new Map() };

  const current = (): Found => {
    const key = stamp(roots, found.skills);
    if (key === found.key) return found;
    found = discover(roots);
    return found;
  };

  const byName = (name: string): SkillEntry | undefined => current().skills.find((s) => s.name === name);
  const unknown = (name: string): { ok: false; error: string } => {
    const names = current().skills.map((s) => s.name);
    return { ok: false, error: `no skill "${name}"; the skills are: ${names.length ? names.join(', ') : '(none)'}` };
  };

  return {
    list: () => current().skills,
    problems: () => current().problems,
    section(holdsTool) {
      const skills = current().skills;
      if (skills.length === 0) return '';
      const how = holdsTool
        ? 'When a task matches a skill\'s description, load the skill with the skill tool ({"name": "<name>"}) and follow it.'
        : 'You do not hold the skill tool: when a task needs one of these, ask an agent that holds it.';
      return `# Skills\nSkills are instructions for particular kinds of task. ${how}\n${skills.map((s) => `- ${s.name}: ${s.description}`).join('\n')}`;
    },
    async load(name) {
      const skill = byName(name);
      if (!skill) return unknown(name);
      const file = await inside(skill.dir, 'SKILL.md', current().realDirs.get(skill.dir));
      if (!file.ok) return file;
      const text = await readCapped(file.path);
      const front = parseFrontMatter(text, file.path);
      if (!front.ok) return { ok: false, error: front.error };
      return { ok: true, body: front.body, files: await listFiles(skill.dir) };
    },
    async readFile(name, path) {
      const skill = byName(name);
      if (!skill) return unknown(name);
      const file = await inside(skill.dir, path, current().realDirs.get(skill.dir));
      if (!file.ok) return file;
      // A workspace skill's file is still a workspace file: the rules' secret paths stay out.
      const rel = insideOf(guard.workspaceRoot, file.path);
      const why = rel === null ? null : guard.refuse(rel);
      if (why) return { ok: false, error: `${path}: refused: ${why}` };
      return { ok: true, text: await readCapped(file.path) };
    },
  };
}

function stamp(roots: readonly SkillRoot[], skills: readonly SkillEntry[]): string {
  const parts: string[] = [];
  for (const root of roots) parts.push(statKey(root.dir));
  for (const skill of skills) parts.push(statKey(join(skill.dir, 'SKILL.md')));
  return parts.join('|');
}

function statKey(path: string): string {
  try {
    // A missing folder or file (the usual answer) throws nothing.
    const s = statSync(path, { throwIfNoEntry: false });
    return s === undefined ? '-' : `${s.ino}:${s.mtimeMs}:${s.size}`;
  } catch {
    return '-';
  }
}

function discover(roots: readonly SkillRoot[]): Found {
  const skills: SkillEntry[] = [];
  const problems: string[] = [];
  const realDirs = new Map<string, string>();
  for (const root of roots) {
    let names: string[];
    if (surelyAbsent(root.dir)) continue;
    try {
      names = readdirSync(root.dir).sort();
    } catch {
      continue;
    }
    for (const folder of names) {
      const dir = join(root.dir, folder);
      const file = join(dir, 'SKILL.md');
      try {
        if (!lstatSync(dir).isDirectory() || !lstatSync(file).isFile()) continue;
      } catch {
        continue;
      }
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch (error) {
        problems.push(`${file}: cannot read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
        continue;
      }
      const front = parseFrontMatter(text, file);
      if (!front.ok) {
        problems.push(front.error);
        continue;
      }
      const name = front.data.name === undefined ? folder : front.data.name;
      if (typeof name !== 'string' || !NAME.test(name)) {
        problems.push(`${file}:${front.lineOf('name')}: name: lowercase letters, digits and dashes, at most 64`);
        continue;
      }
      const description = front.data.description;
      if (typeof description !== 'string' || !description.trim()) {
        problems.push(`${file}:${front.lineOf('description')}: description: missing (say what the skill is for and when to use it)`);
        continue;
      }
      const earlier = skills.find((s) => s.name === name);
      if (earlier) {
        problems.push(`${file}: name: "${name}" is also the skill of ${earlier.dir} (that one is used)`);
        continue;
      }
      // The folder itself, not a link to elsewhere (one swapped in since the lstat above: skipped).
      let realDir: string;
      try {
        realDir = join(realpathSync(root.dir), folder);
        if (realpathSync(dir) !== realDir) continue;
      } catch {
        continue;
      }
      realDirs.set(dir, realDir);
      skills.push({ name, description: description.trim().replace(/\s+/g, ' ').slice(0, 1024), dir });
    }
  }
  const key = stamp(roots, skills);
  return { key, skills, problems, realDirs };
}

/**
 * `path` inside the skill's folder, a regular file, links included only when they stay inside.
 * `realDir`: the folder as it resolved when the skill was found; it must resolve there still (a
 * folder swapped for a link since leads nowhere), and the file is then read through a checked
 * descriptor (readCapped), so a swap after this check fails the read too.
 */
async function inside(dir: string, path: string, realDir: string | undefined): Promise<{ ok: true; path: string } | { ok: false; error: string }> {
  if (isAbsolute(path)) return { ok: false, error: `${path}: give a path inside the skill's folder` };
  if (realDir === undefined) return { ok: false, error: `${path}: the skill's folder changed; ask again` };
  let real: string;
  try {
    if ((await realpath(dir)) !== realDir) return { ok: false, error: `${path}: the skill's folder changed; ask again` };
    real = await realpath(join(dir, path));
  } catch {
    return { ok: false, error: `${path}: no such file in the skill` };
  }
  const rel = relative(realDir, real);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return { ok: false, error: `${path}: outside the skill's folder` };
  if (!(await stat(real)).isFile()) return { ok: false, error: `${path}: not a file` };
  return { ok: true, path: real };
}

/**
 * Read `path` (a real path `inside` checked) through a descriptor confirmed to be that file
 * (openCheckedForRead): a folder on the way swapped for a symbolic link after the check — the
 * workspace's skill folders are an agent's to change meanwhile — fails the read instead of
 * reading where the link leads (outside the workspace, or into `.legion/`).
 */
async function readCapped(path: string): Promise<string> {
  const handle = await openCheckedForRead(path);
  let buffer: Buffer;
  try {
    buffer = await handle.readFile();
  } finally {
    await handle.close();
  }
  if (buffer.length <= SKILL_MAX_BYTES) return buffer.toString('utf8');
  return `${buffer.subarray(0, SKILL_MAX_BYTES).toString('utf8')}\n[cut: the file is ${buffer.length} bytes; only the first ${SKILL_MAX_BYTES} are shown]`;
}

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (at: string, depth: number): Promise<void> => {
    if (depth > 3 || out.length >= MAX_LISTED) return;
    let entries;
    try {
      entries = await readdir(at, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (out.length >= MAX_LISTED) return;
      const path = join(at, entry.name);
      const rel = relative(dir, path).split(sep).join('/');
      if (entry.isDirectory()) await walk(path, depth + 1);
      else if (entry.isFile() && rel !== 'SKILL.md') out.push(rel);
    }
  };
  await walk(dir, 0);
  return out;
}
