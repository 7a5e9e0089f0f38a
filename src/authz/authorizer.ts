import { existsSync, lstatSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, posix, relative, sep } from 'node:path';
import micromatch from 'micromatch';
import type { Participant } from '../collective/participant';
import type { CallToAuthorize, Decision, Verdict } from './types';
import { liftsAsk, type AllowanceSet } from './allowances';
import { applyPolicy, personOnly, policyFor } from './policy';
import { evaluateRules, type RealPathOf, type RealPathScope, type RuleOutcome } from './rules/evaluate';
import { ENTRY_FOLDER, ENTRY_LINK, ENTRY_OTHER, FolderListings, type FolderStats, type Listing } from './dir-listings';
import { hasGlobSyntax, isPathField } from './rules/known-tools';
import { confinementProblem, normalizeRulePath } from './rules/paths';
import type { RuleSet } from './rules/rule-set';

export interface AuthorizerOptions {
  readonly ruleSet: RuleSet;
  readonly getParticipant: (id: string) => Participant | undefined;
  /** Absolute workspace root. */
  readonly workspaceRoot: string;
  /** Session allowances of the run; they only turn an `ask` into `allow`. */
  readonly allowances?: AllowanceSet;
  /**
   * Optional: the workspace-relative real path of a workspace-relative path (symlinks
   * resolved), or null when it cannot be resolved. When given and different, the rules
   * are evaluated for both paths and the stricter outcome holds, so a symlink `notes → .env`
   * does not launder a secret. Without it, a shell `{ readOnly }` rule allows no command
   * naming a path (it cannot see symlinks).
   */
  readonly realPath?: RealPathOf;
  /** The user's home folder (the shell's HOME): deny rules see `rm -rf ~/../*` as `rm -rf /*` (RuleQuery.homeDir). */
  readonly homeDir?: string;
  /**
   * Required: the absolute paths below `root`, outside its `.git/`, that git runs or reads as
   * configuration (the workspace's `core.hooksPath` folders, the files its config includes, the
   * user's own git config when it lies there: git-guard's workspaceHooksPaths, which the sandbox
   * keeps read-only for shell). A file tool's write there is a person's to approve, as one under
   * `.git/` is ([GIT_CONFIG_ASK]); called for file changes only, at each decision (the config may change).
   */
  readonly gitConfigPaths: (root: string) => readonly string[];
}

export type Authorizer = (call: CallToAuthorize) => Verdict;

/**
 * Authorize one tool call (docs/design.md#authorization, steps 1–3), synchronously and without side effects:
 *   1. the participant must exist, be active and hold the tool (`tools`, exact names or
 *      globs; the user holds every tool) — else deny, source `tools`;
 *   2. path fields must stay in the workspace and out of `.legion/` (lexical; the tools
 *      re-check with realpath) — else deny, source `confinement`;
 *   3. the rules (deny > ask > allow);
 *   4. the participant's `toolAuthorizations` (only stricter; decide where no rule matched),
 *      then `defaults.unmatched`;
 *   5. a session allowance turns a remaining `ask` into `allow` (never a deny; a file tool's only
 *      a fallback's, a policy's or the default's ask: liftsAsk), source `allowance`.
 */
export function createAuthorizer(options: AuthorizerOptions): Authorizer {
  const { ruleSet, getParticipant, workspaceRoot, allowances, realPath, homeDir, gitConfigPaths } = options;
  return (call) => {
    const participant = getParticipant(call.participantId);
    if (!participant) return deny('tools', `unknown participant "${call.participantId}"`);
    if (participant.status === 'retired') return deny('tools', `"${participant.id}" is retired`);
    if (participant.kind === 'agent' && !holdsTool(participant.tools, call.toolName)) {
      return deny('tools', `"${participant.id}" does not have the tool "${call.toolName}"`);
    }
    // An isolated session's paths are its worktree's (docs/worktrees.md).
    const root = call.isolatedRoot ?? workspaceRoot;
    // Made per call, so without folder listings (a listing read per call would cost more than it saves).
    const realPathOf = call.isolatedRoot !== undefined && realPath ? workspaceRealPath(call.isolatedRoot, NO_LISTINGS) : realPath;
    const confinement = confinementOf(call.input, root);
    if (confinement) return deny('confinement', confinement);

    const query = { toolName: call.toolName, input: call.input, participantId: call.participantId, workspaceRoot: root, ...(homeDir !== undefined ? { homeDir } : {}), ...(realPathOf ? { realPath: realPathOf } : {}) };
    let rules = evaluateRules(ruleSet, query);
    if (realPathOf && rules.decision !== 'deny') {
      const resolved = withRealPaths(call.input, root, realPathOf);
      if (resolved) {
        const escape = confinementOf(resolved, root);
        if (escape) return deny('confinement', `${escape} (through a symbolic link)`);
        rules = stricter(rules, evaluateRules(ruleSet, { ...query, input: resolved }));
      }
    }
    if (CHANGES_FILES.has(call.toolName) && rules.decision !== 'deny' && changesGitConfig(call.input, root, realPathOf, () => gitConfigPaths(root))) {
      rules = stricter(rules, GIT_CONFIG_ASK);
    }
    if (call.isolatedRoot !== undefined) rules = freeInWorktree(call.toolName, rules);
    const policy = participant.kind === 'agent' ? policyFor(participant.toolAuthorizations, call.toolName) : null;
    const verdict = applyPolicy(rules, policy, ruleSet.unmatched);
    if (verdict.decision === 'ask' && allowances) {
      const allowance = allowances.find(call, root);
      if (allowance && liftsAsk(allowance, verdict)) return { decision: 'allow', ruleId: allowance.rule.id, reason: allowance.rule.reason ?? 'allowed for this session', source: 'allowance' };
    }
    return verdict;
  };
}

/** The file tools that change files (written, edited or deleted by Legion's own process, unsandboxed). */
const CHANGES_FILES: ReadonlySet<string> = new Set(['file_write', 'file_edit', 'file_delete']);

/** File changes an isolated session may make in its own worktree where only a fallback rule would ask. */
export const FREE_IN_WORKTREE: ReadonlySet<string> = CHANGES_FILES;

/**
 * The ask of a file change to what git runs from outside `.git/` (AuthorizerOptions.gitConfigPaths):
 * the shipped `git-internals-ask`'s, whose globs cannot name paths the repository's config chooses.
 * Only a person answers it (approver: user), and no allowance lifts it (it is no fallback's ask).
 */
const GIT_CONFIG_ASK: RuleOutcome = {
  decision: 'ask',
  ruleId: 'git-internals-ask',
  approver: 'user',
  reason: "git runs this file or reads it as configuration (the repository's core.hooksPath, a config it includes, or your own git config): changing it always needs your approval",
};

/**
 * Whether a path field of the input names (as written, or where its links lead) one of the guarded
 * paths or a path below one. `guardedPaths` reads the repository's config: called once, and only
 * for an input with a path field.
 */
function changesGitConfig(input: unknown, root: string, realPathOf: RealPathOf | undefined, guardedPaths: () => readonly string[]): boolean {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return false;
  let guarded: readonly string[] | undefined;
  let realRoot: string | undefined;
  const under = (path: string) => guarded!.some((g) => path === g || path.startsWith(g.endsWith(sep) ? g : g + sep));
  for (const [field, value] of Object.entries(input)) {
    if (!isPathField(field) || typeof value !== 'string') continue;
    guarded ??= guardedPaths();
    if (guarded.length === 0) return false;
    const lexical = normalizeRulePath(value, root);
    if (under(isAbsolute(lexical) ? lexical : join(root, lexical))) return true;
    const real = realPathOf ? realPathOf(value) ?? whereMissingWouldBe(value, root, realPathOf, 0) : null;
    if (real !== null && under(isAbsolute(real) ? real : join((realRoot ??= realRootOf(root)), real))) return true;
  }
  return false;
}

function realRootOf(root: string): string {
  try {
    return realpathSync(root);
  } catch {
    return root;
  }
}
export const WORKTREE_RULE_ID = 'isolated-worktree';

/**
 * Inside its worktree an isolated session's writes, edits and deletes pass where the fallback
 * rules would ask (nothing outside changes; the merge request is reviewed at the door). Any other
 * rule that matches (a deny, an ask such as `.git/` writes, an allow) still decides; shell keeps its rules.
 */
function freeInWorktree(toolName: string, rules: RuleOutcome): RuleOutcome {
  if (!FREE_IN_WORKTREE.has(toolName) || rules.decision !== null || !rules.fallback || rules.fallback.decision !== 'ask') return rules;
  return { decision: 'allow', ruleId: WORKTREE_RULE_ID, reason: 'inside its own worktree: the workspace changes only through an approved merge request' };
}

function deny(source: 'tools' | 'confinement', reason: string): Verdict {
  return { decision: 'deny', ruleId: null, reason, source };
}

/** Tools every agent holds whatever its grants: `recall` reads only the caller's own session (docs/context.md). */
export const INTRINSIC_TOOLS: ReadonlySet<string> = new Set(['recall']);

/** Whether a `tools` list (exact names or globs) includes `toolName` (or it is intrinsic). */

export function holdsTool(tools: readonly string[], toolName: string): boolean {
  if (tools.includes(toolName) || INTRINSIC_TOOLS.has(toolName)) return true;
  return tools.some((glob) => hasGlobSyntax(glob) && micromatch.isMatch(toolName, glob, { dot: true }));
}

/** The first path field of the input that leaves the workspace or enters `.legion/`, as a reason. */
export function confinementOf(input: unknown, workspaceRoot: string): string | null {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return null;
  for (const [field, value] of Object.entries(input)) {
    if (!isPathField(field) || typeof value !== 'string') continue;
    const problem = confinementProblem(normalizeRulePath(value, workspaceRoot));
    if (problem) return `${field}: ${problem}`;
  }
  return null;
}

/** The input with path fields replaced by their real paths, or null when none differs. */
function withRealPaths(input: unknown, workspaceRoot: string, realPath: (p: string) => string | null): Record<string, unknown> | null {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return null;
  let changed: Record<string, unknown> | null = null;
  for (const [field, value] of Object.entries(input)) {
    if (!isPathField(field) || typeof value !== 'string') continue;
    const lexical = normalizeRulePath(value, workspaceRoot);
    const real = realPath(value) ?? whereMissingWouldBe(value, workspaceRoot, realPath, 0);
    if (real === null || normalizeRulePath(real, workspaceRoot) === lexical) continue;
    changed ??= { ...(input as Record<string, unknown>) };
    changed[field] = real;
  }
  return changed;
}

/**
 * Where a path that does not exist yet would be made, as realPath gives it (workspace-relative,
 * or absolute out of it): a dangling symbolic link is followed, as the file tools follow it
 * (tools/path-safety.ts), and a missing folder's nearest existing ancestor is resolved, the rest
 * appended. Without this a new file written through a linked folder (`scripts/hk/pre-commit`,
 * `scripts/hk` a link to `.git/hooks`) was checked only as written. Null: nothing to resolve.
 */
function whereMissingWouldBe(written: string, workspaceRoot: string, realPath: (p: string) => string | null, hops: number): string | null {
  if (hops > 40) return null;
  let link: string | undefined;
  try {
    const absolute = isAbsolute(written) ? written : `${workspaceRoot}${sep}${written}`;
    if (lstatSync(absolute, { throwIfNoEntry: false })?.isSymbolicLink()) link = readlinkSync(absolute);
  } catch {
    return null;
  }
  const parent = posix.dirname(written);
  if (link !== undefined) {
    // Relative to the link's folder, as written (not normalized: `dir/link/..` is the kernel's).
    const target = isAbsolute(link) ? link : `${parent}/${link}`;
    return realPath(target) ?? whereMissingWouldBe(target, workspaceRoot, realPath, hops + 1);
  }
  if (parent === written || parent === '.' || parent === '/') return null;
  // A shorter path each time: only the links followed are counted (a deep new folder is not a loop).
  const folder = realPath(parent) ?? whereMissingWouldBe(parent, workspaceRoot, realPath, hops);
  if (folder === null) return null;
  const name = posix.basename(written);
  return folder === '.' ? name : `${folder}/${name}`;
}

const STRICTNESS: Record<Decision | 'none', number> = { allow: 0, none: 1, ask: 2, deny: 3 };

/** The stricter outcome; of two asks, one only a person may answer (personOnly: `approver: user`) is the stricter. */
function stricter(a: RuleOutcome, b: RuleOutcome): RuleOutcome {
  const byDecision = STRICTNESS[b.decision ?? 'none'] - STRICTNESS[a.decision ?? 'none'];
  if (byDecision !== 0) return byDecision > 0 ? b : a;
  return b.decision === 'ask' && personOnly(b) && !personOnly(a) ? b : a;
}

/**
 * A `realPath` for `createAuthorizer`: resolves symlinks of a workspace-relative path and
 * returns it relative to the real workspace root (or absolute when it leads out), null
 * when it does not exist yet. Synchronous filesystem access on every call: what a folder
 * holds is remembered between calls only as a listing checked current by a lstat(2) of the
 * folder in the same decision (dir-listings.ts: its device, inode and ctime unchanged), so a
 * symlink swapped in between two decisions is seen by the second. Pass it from the
 * composition root (one per workspace: its listings are its own).
 */
export function workspaceRealPath(workspaceRoot: string, system: RealPathSystem = NODE_SYSTEM): RealPathOf {
  let realRoot: string;
  let rootResolved = true;
  try {
    realRoot = realpathSync(workspaceRoot);
  } catch {
    realRoot = workspaceRoot;
    rootResolved = false;
  }
  const listings = system.listings === undefined ? new FolderListings() : system.listings;
  const realPathOf = (written: string, scope?: RealPathScope): string | null => {
    if (rootResolved && !isAbsolute(written)) {
      const walked = walkBelow(system, listings, realRoot, written, scope);
      if (walked !== undefined) return walked;
    }
    // As written, never normalized first: `docs/link/../x` goes through the link and then up
    // from its target, as the kernel resolves it (join() would drop `link/..` and check `docs/x`).
    const path = isAbsolute(written) ? written : `${realRoot}${sep}${written}`;
    try {
      // No exception for a missing path (the common case for new files): exceptions are slow.
      if (!statSync(path, { throwIfNoEntry: false })) return null;
      const real = realpathSync.native(path);
      const rel = relative(realRoot, real);
      return rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? real : rel.split(sep).join('/');
    } catch {
      return null;
    }
  };
  // realPathOf(written) !== null, in one access(2) and no Stats object (or, for a name in the
  // root, from the root's listing): realPathOf answers null exactly when the path, its symbolic
  // links followed, names nothing (or cannot be resolved).
  const exists = (written: string, scope?: RealPathScope): boolean => {
    if (rootResolved && listings !== null && written !== '' && written !== '.' && written !== '..' && written.indexOf('/') === -1) {
      // Listed and not a link: it exists. Anything else is looked up (a name not listed may still resolve: walkBelow).
      const kind = listingOf(system, listings, realRoot, scope)?.get(written);
      if (kind === ENTRY_FOLDER || kind === ENTRY_OTHER) return true;
    }
    return existsSync(isAbsolute(written) ? written : `${realRoot}${sep}${written}`);
  };
  return Object.assign(realPathOf, { exists });
}

/** lstat's options, made once (no object per call): a missing path answers undefined, not an exception. */
const NO_THROW = { throwIfNoEntry: false } as const;

/** The lookups workspaceRealPath's walk makes (a parameter: a test counts them). */
export interface RealPathSystem {
  /** lstat(2) of an absolute path; undefined when nothing is there. */
  lstat(path: string): FolderStats | undefined;
  /** The folder listings to use (dir-listings.ts); null for none (one lstat per component); undefined: new ones on the system's own calls. */
  readonly listings?: FolderListings | null;
}

const NODE_SYSTEM: RealPathSystem = { lstat: (path) => lstatSync(path, NO_THROW) };
const NO_LISTINGS: RealPathSystem = { lstat: NODE_SYSTEM.lstat, listings: null };

/** The listing of `folder` found current in this decision, if the scope holds one. */
function scopeListing(scope: RealPathScope | undefined, folder: string): Listing | null {
  if (scope === undefined) return null;
  const at = scope.folders.indexOf(folder);
  return at === -1 ? null : (scope.listings[at] as Listing | null);
}

/**
 * The entries of the workspace's real root if a listing of it can be used in this decision:
 * the root is looked up (lstat) once per decision (the scope keeps what was found), and not at
 * all while its listings say none can be trusted yet.
 */
function listingOf(system: RealPathSystem, listings: FolderListings, realRoot: string, scope: RealPathScope | undefined): Listing | null {
  const seen = scope === undefined ? -1 : scope.folders.indexOf(realRoot);
  if (seen !== -1) return scope!.listings[seen] as Listing | null;
  if (!listings.mayList(realRoot)) return null;
  return folderEntries(system, listings, realRoot, scope) ?? null;
}

/**
 * The fast, common case of `workspaceRealPath`: a relative path whose components (no `..`)
 * are all real directories and files, checked from the real root — one `lstat` per folder on
 * the way, and per last component only where its folder has no current listing — fewer
 * system calls than realpath(3), which reads every component of the absolute path. Its
 * workspace-relative form, null when a component does not exist, or undefined when the
 * walk cannot decide alone (a symbolic link, `..`, a file with more components after it,
 * any error): then realpath(3) resolves it. A folder `scope` holds (seen a real directory
 * earlier in the same decision) is not looked up again, and each folder seen is added to it
 * with its listing if one is current.
 */
function walkBelow(system: RealPathSystem, listings: FolderListings | null, realRoot: string, written: string, scope: RealPathScope | undefined): string | null | undefined {
  if (written === '' || written === '.') return '.';
  // The current folder's entries, when a listing of it is current in this decision.
  let entries = listings === null ? null : listingOf(system, listings, realRoot, scope);
  // Component by component, without an array of them; `rel` is made only once one was dropped (`a//b`, `./a`).
  let path = realRoot;
  let rel = '';
  let dropped = false;
  for (let start = 0; start <= written.length; ) {
    const slash = written.indexOf('/', start);
    const last = slash === -1;
    const end = last ? written.length : slash;
    const part = written.slice(start, end);
    start = end + 1;
    if (part === '' || part === '.') {
      dropped = true;
      continue;
    }
    if (part === '..') return undefined;
    path += sep + part;
    // A name in a current listing: what it is, from there. A name not in it is looked up (a
    // case-folding folder, ext4's casefold, resolves `Notes.txt` to its `notes.txt`).
    const kind = entries === null ? undefined : entries.get(part);
    if (kind !== undefined) {
      if (kind === ENTRY_LINK) return undefined;
      if (!last) {
        if (kind !== ENTRY_FOLDER) return undefined; // `file/…`: realpath says
        // Its listing checked current (one lstat), unless seen in this decision.
        const inner = folderEntries(system, listings!, path, scope);
        if (inner === undefined) return undefined;
        entries = inner;
      }
    } else if (last || scope === undefined || !scope.folders.includes(path)) {
      // Only a folder with more components after it is taken from the scope: a last component (a link to a secret) is always looked up.
      let stats;
      try {
        stats = system.lstat(path);
      } catch {
        return undefined;
      }
      if (!stats) return null;
      if (stats.isSymbolicLink()) return undefined;
      // `file/` and `file/.` fail as the kernel reads them (not a directory): let realpath say so.
      if (!stats.isDirectory() && !last) return undefined;
      if (!last) {
        entries = listings === null ? null : listings.entries(path, stats);
        if (scope !== undefined) {
          scope.folders.push(path);
          scope.listings.push(entries);
        }
      }
    } else {
      entries = scopeListing(scope, path);
    }
    if (dropped) rel = rel === '' ? part : `${rel}/${part}`;
    else rel = written.slice(0, end);
  }
  // `dir/` with a trailing slash names the folder: realpath's answer is the folder itself.
  return rel === '' ? '.' : rel;
}

/**
 * The entries of `folder`, a folder according to a current listing of its parent: from the
 * scope when seen in this decision, else after one lstat of it (which must show a real
 * folder). Null when it has no current listing; undefined when the lookup failed.
 */
function folderEntries(system: RealPathSystem, listings: FolderListings, folder: string, scope: RealPathScope | undefined): Listing | null | undefined {
  if (scope !== undefined) {
    const at = scope.folders.indexOf(folder);
    if (at !== -1) return scope.listings[at] as Listing | null;
  }
  let stats;
  try {
    stats = system.lstat(folder);
  } catch {
    return undefined;
  }
  if (!stats || !stats.isDirectory() || stats.isSymbolicLink()) return undefined;
  const entries = listings.entries(folder, stats);
  if (scope !== undefined) {
    scope.folders.push(folder);
    scope.listings.push(entries);
  }
  return entries;
}
