import type { Decision } from '../types';
import type { CompiledField, CompiledRule } from './compile';
import type { RuleSet, ToolTiers } from './rule-set';
import { isFileTool, TOOL_NAME_PATTERN } from './known-tools';
import { confinementProblem, normalizeRulePath } from './paths';
import { argvText, hasWhitespace, scanPlain, type PlainCommand, type PlainParse } from './shell-plain';
import { allowCandidates, candidateRules } from './prefix-index';
import { candidateMaskInto } from './rule-index';
import { readOnlyResolvedProblem, readOnlyWrittenProblem, type PathChecks, type RepositoryCheck } from './shell-read-only';
import { MAX_SHELL_LENGTH, splitShell, type ShellSplit } from './shell-split';
import { pipeToShellViews } from './shell-pipe';
import { addStrictViews, argvViewsCovered, joinsAs, Views, withExpansionDefaults } from './shell-views';
import { refusedLinesForDeny } from './shell-refused';
import { mayTargetPaths, resolvedViews, type ResolvedViews } from './shell-cwd';

/** One call as the rules see it. */
export interface RuleQuery {
  readonly toolName: string;
  readonly input: unknown;
  readonly participantId: string;
  /** Absolute workspace root, for path normalization. */
  readonly workspaceRoot: string;
  /**
   * The user's home folder (the shell's HOME), so that deny rules read `rm -rf ~/../*` as
   * `rm -rf /*` (shell-cwd.ts). Without it `~` is not resolved (such a line is not plain words: it asks).
   */
  readonly homeDir?: string;
  /**
   * The workspace-relative real path of a path as written (relative to the workspace, or
   * absolute), resolved as the kernel does — symlinks followed in order, so `link/..` is the
   * parent of the link's target — absolute when it leads out, null when it does not exist
   * (authorizer.ts `workspaceRealPath`). Without
   * it a `{ readOnly }` rule allows no command that names a path: it cannot see symlinks.
   */
  readonly realPath?: RealPathOf;
}

/**
 * A path's real path (RuleQuery.realPath) and, optionally, whether it names anything once its
 * symbolic links are followed — `realPath(p) !== null`, answered more cheaply (git's `.git`).
 */
export interface RealPathOf {
  (relativePath: string, scope?: RealPathScope): string | null;
  readonly exists?: (relativePath: string, scope?: RealPathScope) => boolean;
}

/**
 * What one decision's lookups have found so far, passed to each RealPathOf call of that
 * decision and dropped with it (a symlink can change between two decisions): the folders, by
 * absolute path, seen to be real directories, not links, so a line naming `src/a.ts src/b.ts`
 * looks `src` up once, with the listings of them found still current.
 */
export interface RealPathScope {
  readonly folders: string[];
  /** Per folder (same index), its entries if the resolver may use a listing of it this decision, else null (authorizer.ts, dir-listings.ts). */
  readonly listings: (ReadonlyMap<string, number> | null)[];
}

/** What the rules say. `decision: null` = no rule matched (policies and defaults decide). */
export interface RuleOutcome {
  readonly decision: Decision | null;
  readonly ruleId: string | null;
  readonly reason: string;
  readonly approver?: string;
  /** With `decision: null`: the first fallback rule that matches, deciding in place of `defaults.unmatched`. */
  readonly fallback?: RuleOutcome;
  /**
   * A shell command that is not plain words (shell-plain.ts): why. No rule allowed it, and
   * nothing else may either: policies and defaults that would allow it ask (policy.ts).
   */
  readonly notPlain?: string;
}

type Lookup = (field: string, isPath: boolean, strict: boolean) => readonly string[] | null;

/**
 * Evaluate the rules for one call. Pure: the result depends only on the arguments.
 * Among matching rules deny > ask > allow (first in file order within a decision).
 * A tool name outside `[A-Za-z0-9_.:-]` (a look-alike such as Cyrillic `а`) is denied.
 * `shell` commands are split (shell-split.ts): deny if the whole command or any part
 * (in any of its strict views) is denied; ask if it cannot be split or anything asks. Allow
 * only if the line is plain words (shell-plain.ts) and every simple command's argv is
 * allowed (`{ words }` prefix, glob or regex over the words joined by spaces, `{ readOnly }`
 * with its paths checked); a line that is not plain words gets no decision and `notPlain`.
 */
export function evaluateRules(ruleSet: RuleSet, query: RuleQuery): RuleOutcome {
  const { toolName } = query;
  if (!TOOL_NAME_PATTERN.test(toolName)) {
    return { decision: 'deny', ruleId: null, reason: `tool name ${JSON.stringify(toolName)} has characters outside [A-Za-z0-9_.:-]` };
  }
  const tiers = ruleSet.tiersFor(toolName);
  const input = isRecord(query.input) ? query.input : {};
  const lookup = inputLookup(input, query.workspaceRoot, toolName);
  const shell = toolName === 'shell' && typeof input.command === 'string';
  // Without a shell command the outcome depends only on strings (paths are matched lexically; the
  // authorizer resolves symlinks and asks again): remembered.
  const key = shell ? null : memoKey(tiers, query, input);
  const memo = key === null ? null : memoOf(tiers);
  const known = memo?.get(key!);
  if (known) return known;
  const ruled = shell ? evaluateShell(ruleSet, tiers, query, input.command as string, lookup) : evaluateWhole(tiers, query.participantId, lookup);
  let result = ruled;
  // No rule decided: the first matching fallback rule (ask or deny) stands in for defaults.unmatched.
  if (ruled.decision === null) {
    for (const rule of tiers.fallback) {
      if (matches(rule, query.participantId, lookup)) {
        result = withFallback(ruled, outcome(rule));
        break;
      }
    }
  }
  if (memo) remember(memo, key!, result);
  return result;
}

/** `ruled` (no decision) with the fallback rule's outcome: its fields in the same order, without an object spread (slower, and on every new call that no rule decides). */
function withFallback(ruled: RuleOutcome, fallback: RuleOutcome): RuleOutcome {
  const out: { -readonly [K in keyof RuleOutcome]: RuleOutcome[K] } = { decision: ruled.decision, ruleId: ruled.ruleId, reason: ruled.reason };
  if (ruled.approver !== undefined) out.approver = ruled.approver;
  if (ruled.notPlain !== undefined) out.notPlain = ruled.notPlain;
  out.fallback = fallback;
  return out;
}

/**
 * Outcomes remembered per tool's rules, keyed by the participant, the workspace and the values
 * of the input fields those rules read (memoKey): only parts of a decision that are pure
 * functions of these strings. Bounded; frozen, since callers share them.
 */
const memos = new WeakMap<ToolTiers, Map<string, RuleOutcome | null>>();
const MEMO_LIMIT = 4096;
/** Longer keys (a file's content in a rule's field) are not remembered. */
const MEMO_KEY_LIMIT = 2048;
const fieldsRead = new WeakMap<ToolTiers, readonly string[]>();

function memoOf(tiers: ToolTiers): Map<string, RuleOutcome | null> {
  let memo = memos.get(tiers);
  if (!memo) memos.set(tiers, (memo = new Map()));
  return memo;
}

function remember<T extends RuleOutcome | null>(memo: Map<string, RuleOutcome | null>, key: string, value: T): T {
  if (memo.size >= MEMO_LIMIT) memo.clear();
  memo.set(key, value === null ? null : Object.freeze(value));
  return value;
}

/** The memo key of a call for these rules, or null when it is too long to keep. */
function memoKey(tiers: ToolTiers, query: RuleQuery, input: Record<string, unknown>): string | null {
  let names = fieldsRead.get(tiers);
  if (!names) {
    const all = new Set<string>();
    for (const list of [tiers.deny, tiers.ask, tiers.allow, tiers.fallback]) for (const rule of list) for (const f of rule.fields) all.add(f.name);
    fieldsRead.set(tiers, (names = [...all].sort()));
  }
  let key = `${query.toolName}\0${query.participantId}\0${query.workspaceRoot}`;
  for (const name of names) {
    key += `\0${Object.hasOwn(input, name) ? JSON.stringify(input[name]) ?? 'u' : 'u'}`;
    if (key.length > MEMO_KEY_LIMIT) return null;
  }
  return key;
}

function evaluateWhole(tiers: ToolTiers, participantId: string, lookup: Lookup): RuleOutcome {
  const found = firstMatch(tiers.deny, participantId, lookup) ?? firstMatch(tiers.ask, participantId, lookup) ?? firstMatch(tiers.allow, participantId, lookup);
  return found ? outcome(found) : { decision: null, ruleId: null, reason: 'no rule matches' };
}

/** Below this many rules a list is tested rule by rule: the index would cost more than it saves. */
const INDEX_FROM = 8;

/** The first rule of `rules`, in file order, that matches; only rules the index cannot rule out are tested (rule-index.ts). */
function firstMatch(rules: readonly CompiledRule[], participantId: string, lookup: Lookup): CompiledRule | null {
  if (rules.length < INDEX_FROM) {
    for (const rule of rules) if (matches(rule, participantId, lookup)) return rule;
    return null;
  }
  // A mask per nesting depth, reused: a rule's test can run firstMatch again (a read-only
  // command's file_read check), which must not overwrite the mask this call is reading.
  const depth = maskDepth++;
  try {
    let mask = masks[depth];
    if (!mask || mask.length < rules.length) masks[depth] = mask = new Uint8Array(Math.max(rules.length, 512));
    candidateMaskInto(rules, lookup, mask);
    const applies = participantMask(rules, participantId);
    for (let i = 0; i < rules.length; i++) if (mask[i] && applies[i] && matches(rules[i]!, participantId, lookup)) return rules[i]!;
    return null;
  } finally {
    maskDepth--;
  }
}

/**
 * Per rule list and participant, which rules apply to the participant (no `participants`, or
 * one of its globs matches): a pure function of the two, remembered (bounded), so a call does
 * not run the participant globs of every candidate again (rules scoped to other participants,
 * `file_*` for `team-*`, are candidates for every path they hold no literal of).
 */
const participantMasks = new WeakMap<readonly CompiledRule[], Map<string, Uint8Array>>();
const PARTICIPANT_MASK_LIMIT = 256;

function participantMask(rules: readonly CompiledRule[], participantId: string): Uint8Array {
  let byParticipant = participantMasks.get(rules);
  if (!byParticipant) participantMasks.set(rules, (byParticipant = new Map()));
  let mask = byParticipant.get(participantId);
  if (!mask) {
    if (byParticipant.size >= PARTICIPANT_MASK_LIMIT) byParticipant.clear();
    mask = new Uint8Array(rules.length);
    for (let i = 0; i < rules.length; i++) {
      const matcher = rules[i]!.matchesParticipant;
      mask[i] = !matcher || matcher(participantId) ? 1 : 0;
    }
    byParticipant.set(participantId, mask);
  }
  return mask;
}

/** firstMatch's candidate masks by nesting depth: one buffer per depth, not a new one per call. */
const masks: Uint8Array[] = [];
let maskDepth = 0;

function evaluateShell(ruleSet: RuleSet, tiers: ToolTiers, query: RuleQuery, command: string, base: Lookup): RuleOutcome {
  const { participantId } = query;
  // Bound the regex work an agent can cause with one call: a huge command line is not matched at all.
  if (command.length > MAX_SHELL_LENGTH) {
    const why = `cannot check this shell command safely (longer than ${MAX_SHELL_LENGTH} characters)`;
    // Not known to be plain words: only a person answers it (personOnly, policy.ts).
    return { decision: 'ask', ruleId: null, reason: why, notPlain: why };
  }
  const analysis = analyzeShell(command);
  // Deny and ask depend only on strings: remembered with the line's analysis (by the rules and
  // the caller). Allow reads the filesystem: never remembered.
  let strict = rememberedStrict(analysis, tiers, query);
  if (strict === undefined) {
    strict = strictPhase(tiers, query, command, analysis, base);
    rememberStrict(analysis, tiers, query, strict);
  }
  if (strict) return strict;
  return allowPhase(ruleSet, tiers, query, analysis, command, base);
}

/**
 * A line's deny and ask outcome is remembered on its analysis (the command's), per rules and
 * caller: the participant and the workspace with any other field the rules read (callerRest)
 * — no key that repeats the command (hashing a new line twice cost more than the lookup saves).
 * A short list searched in order, not maps (a new line would make two: most lines have one
 * caller). Bounded per line (STRICT_PER_LINE); the analyses themselves are bounded (ANALYSIS_LIMIT).
 */
interface StrictMemo {
  readonly tiers: ToolTiers;
  readonly entries: StrictEntry[];
}
interface StrictEntry {
  readonly participantId: string;
  readonly rest: string;
  /** The caller's home: deny views depend on it (and on the workspace, in `rest`: shell-cwd.ts). */
  readonly home: string | undefined;
  readonly outcome: RuleOutcome | null;
}
const STRICT_PER_LINE = 16;
const otherFieldsRead = new WeakMap<ToolTiers, readonly string[]>();

/** The caller's part of the key besides the participant: the workspace and the values of the fields the rules read other than `command`; null when too long to keep. */
function callerRest(tiers: ToolTiers, query: RuleQuery): string | null {
  let names = otherFieldsRead.get(tiers);
  if (!names) {
    const all = new Set<string>();
    for (const list of [tiers.deny, tiers.ask, tiers.allow, tiers.fallback]) for (const rule of list) for (const f of rule.fields) if (f.name !== 'command') all.add(f.name);
    otherFieldsRead.set(tiers, (names = [...all].sort()));
  }
  if (names.length === 0) return query.workspaceRoot;
  const input = query.input as Record<string, unknown>;
  let key = query.workspaceRoot;
  for (const name of names) {
    key += `\0${Object.hasOwn(input, name) ? JSON.stringify(input[name]) ?? 'u' : 'u'}`;
    if (key.length > MEMO_KEY_LIMIT) return null;
  }
  return key;
}

function rememberedStrict(analysis: ShellAnalysis, tiers: ToolTiers, query: RuleQuery): RuleOutcome | null | undefined {
  const memo = analysis.strict;
  if (!memo || memo.tiers !== tiers) return undefined;
  const rest = callerRest(tiers, query);
  if (rest === null) return undefined;
  for (const entry of memo.entries) if (entry.participantId === query.participantId && entry.rest === rest && entry.home === query.homeDir) return entry.outcome;
  return undefined;
}

function rememberStrict(analysis: ShellAnalysis, tiers: ToolTiers, query: RuleQuery, outcome: RuleOutcome | null): void {
  const rest = callerRest(tiers, query);
  if (rest === null) return;
  let memo = analysis.strict;
  if (!memo || memo.tiers !== tiers || memo.entries.length >= STRICT_PER_LINE) analysis.strict = memo = { tiers, entries: [] };
  memo.entries.push({ participantId: query.participantId, rest, home: query.homeDir, outcome: outcome === null ? null : Object.freeze(outcome) });
}

/**
 * Per tool's tiers, its deny rules then its ask rules in one list: a line's views are looked up
 * in one index (one pass over each view, not two), and the candidates, in order, are deny rules
 * before ask rules, so the first match is the first deny rule that matches, else the first ask rule.
 */
const strictRulesOf = new WeakMap<ToolTiers, readonly CompiledRule[]>();

/** Deny and ask for a shell line (its views), or null when neither decides and the allow rules may. */
function strictPhase(tiers: ToolTiers, query: RuleQuery, command: string, analysis: ShellAnalysis, base: Lookup): RuleOutcome | null {
  const { split, splitError } = analysis;
  const { participantId } = query;
  let strictRules = strictRulesOf.get(tiers);
  if (!strictRules) strictRulesOf.set(tiers, (strictRules = [...tiers.deny, ...tiers.ask]));
  // The deny tier holds only deny rules and the ask tier only ask rules (rule-set.ts).
  const hit = strictHit(strictRules, participantId, command, analysis.viewList, analysis.lowerViews, base);
  if (hit?.decision === 'deny') return hit;
  // Paths of rm, find, chmod… resolved from the working folder and home: deny rules only.
  const resolved = analysis.targetsPaths && tiers.deny.length > 0 ? resolvedOf(analysis, query) : null;
  if (resolved && resolved.viewList.length > 0) {
    const denied = strictHit(tiers.deny, participantId, command, resolved.viewList, resolved.lowerViews, base);
    if (denied) return denied;
  }
  const asked = hit;
  const unsure = splitError ?? resolved?.unknown ?? null;
  if (unsure !== null) {
    const why = `cannot check this shell command safely (${unsure})`;
    // A line the parser cannot read is not known to be plain words (bash runs its `$(…)` all the
    // same): only a person answers it, never triage, an agent approver or a hook (personOnly, policy.ts).
    return { decision: 'ask', ruleId: asked?.ruleId ?? null, reason: asked ? `${asked.reason}; ${why}` : why, ...(asked?.approver ? { approver: asked.approver } : {}), notPlain: why };
  }
  if (asked) return asked;
  if (split.commands.length === 0) return { decision: null, ruleId: null, reason: 'empty command' };
  return null;
}

/**
 * The first of `rules` (deny or ask) that matches one of the line's views. A function of the
 * module, as are the other per-decision helpers here, not a closure made per decision.
 */
function strictHit(rules: readonly CompiledRule[], participantId: string, command: string, viewList: readonly string[], lowerViews: readonly string[], base: Lookup): RuleOutcome | null {
  for (const i of candidateRules(rules, lowerViews)) {
    const rule = rules[i]!;
    const field = rule.commandField;
    if (!field) {
      if (matchesExceptCommand(rule, participantId, base)) return outcome(rule);
      continue;
    }
    for (let v = 0; v < viewList.length; v++) {
      if (field.prefix && !lowerViews[v]!.startsWith(field.prefix)) continue;
      const view = viewList[v]!;
      if (field.test(view) && matchesExceptCommand(rule, participantId, base)) return outcome(rule, view === command ? undefined : view);
    }
  }
  return null;
}

/**
 * The allow rules for a shell line that no deny or ask rule decided: every simple command
 * allowed, its paths checked now. Each command's rule is the first candidate, in file order,
 * that allows it; found in two passes so that a line refused without the filesystem makes no
 * system call: first every command's first rule that allows it as written (a `{ readOnly }`
 * rule's grammar and paths as written), then the filesystem checks of the read-only ones (a
 * command they refuse goes on to its next candidate, as if the rule had not matched).
 */
function allowPhase(ruleSet: RuleSet, tiers: ToolTiers, query: RuleQuery, analysis: ShellAnalysis, command: string, base: Lookup): RuleOutcome {
  const { plain, texts } = plainOf(analysis);
  if (!plain.plain) {
    const why = `not plain words: ${plain.why} at character ${plain.at + 1}; no rule can allow it`;
    return { decision: null, ruleId: null, reason: why, notPlain: why };
  }
  const parts = plain.commands;
  if (parts.length === 0) return { decision: null, ruleId: null, reason: 'empty command' };
  const search = new AllowSearch(ruleSet, tiers, query, base);
  const found: AllowFound[] = [];
  for (let p = 0; p < parts.length; p++) {
    const first = search.next(parts[p]!, texts[p]!, allowCandidates(tiers.allow, parts[p]!.argv[0]!, texts[p]!), 0);
    if (typeof first === 'string') return { decision: null, ruleId: null, reason: first };
    found.push(first);
  }
  // A read-only command's paths are checked before the line runs: another command of the same
  // line (`cd /etc`, `ln -s /etc/shadow x`, a build script) could change what they name.
  let readsPaths: string | null = null;
  let mayChange: string | null = null;
  for (let p = 0; p < parts.length; p++) {
    let hit = found[p]!;
    while (hit.rule.commandField?.readOnly) {
      const problem = readOnlyResolvedProblem(parts[p]!, search.checks);
      if (!problem) break;
      search.refusedBy(hit.rule, parts[p]!, problem);
      const next = search.next(parts[p]!, texts[p]!, hit.candidates, hit.at + 1);
      if (typeof next === 'string') return { decision: null, ruleId: null, reason: next };
      found[p] = hit = next;
    }
    if (!hit.rule.commandField?.readOnly) mayChange ??= texts[p]!;
    else if (hit.checkedPaths) readsPaths ??= texts[p]!;
  }
  if (readsPaths !== null && mayChange !== null) {
    return { decision: null, ruleId: null, reason: `\`${readsPaths}\` reads paths checked before the line runs, and \`${mayChange}\` in the same line could change them: run it as a command of its own` };
  }
  const rule = found[0]!.rule;
  return { decision: 'allow', ruleId: rule.id, reason: rule.reason ?? `every part allowed (${rule.id}${parts.length > 1 ? ', …' : ''})` };
}

/** One simple command's allowing rule as written: `candidates[at]` is its index in the allow tier. */
interface AllowFound {
  readonly rule: CompiledRule;
  readonly candidates: readonly number[];
  readonly at: number;
  /** A `{ readOnly }` rule that checked paths of the command (as written). */
  readonly checkedPaths: boolean;
}

/** The first pass of allowPhase for one line: each command's next candidate rule that allows it without the filesystem. */
class AllowSearch {
  readonly checks: LineChecks;
  /** Per command, the first refusal by a read-only rule naming its program (it explains the ask); made on first use. */
  private refusals: Map<PlainCommand, string> | null = null;

  constructor(
    ruleSet: RuleSet,
    private readonly tiers: ToolTiers,
    private readonly query: RuleQuery,
    private readonly base: Lookup,
  ) {
    this.checks = new LineChecks(ruleSet, query);
  }

  /** From `candidates[from]` on, the first rule that allows `part` as written, or the reason none does. */
  next(part: PlainCommand, text: string, candidates: readonly number[], from: number): AllowFound | string {
    const { checks } = this;
    for (let at = from; at < candidates.length; at++) {
      const rule = this.tiers.allow[candidates[at]!]!;
      const field = rule.commandField;
      let checkedPaths = false;
      if (field?.readOnly) {
        // A program the list does not name is refused without a reason (none would be shown: refusedBy).
        if (!namesProgram(field.readOnly, part.argv[0]!)) continue;
        const before = checks.pathsChecked;
        const problem = readOnlyWrittenProblem(field.readOnly, part, checks);
        if (problem) {
          this.refusedBy(rule, part, problem);
          continue;
        }
        checkedPaths = checks.pathsChecked > before;
      } else if (field?.words) {
        if (!startsWithWords(part.argv, field.words)) continue;
      } else if (field && ((field.prefix && !text.startsWith(field.prefix)) || !field.test(text))) {
        continue;
      }
      if (!matchesExceptCommand(rule, this.query.participantId, this.base)) continue;
      return { rule, candidates, at, checkedPaths };
    }
    const refused = this.refusals?.get(part);
    return `no rule allows \`${text}\`${refused ? ` (${refused})` : ''}`;
  }

  /** Notes why a read-only rule refused `part`, if it is the first such rule naming the program. */
  refusedBy(rule: CompiledRule, part: PlainCommand, problem: string): void {
    const refusals = (this.refusals ??= new Map());
    if (!refusals.has(part) && namesProgram(rule.commandField!.readOnly!, part.argv[0]!)) refusals.set(part, `${rule.id}: ${problem}`);
  }
}

/**
 * The path checks of one line's allow phase: the paths checked as written are counted (a line
 * whose read-only command checked paths must not also run a command that could change them),
 * the `file_read` checks are set up on first use, and git's repository is looked up once.
 * Methods (the read-only commands call them on this object): no closure made per decision.
 */
class LineChecks implements PathChecks, RepositoryCheck {
  pathsChecked = 0;
  private checks: FileReadChecks | null = null;
  private repository: string | null | undefined = undefined;

  constructor(
    private readonly ruleSet: RuleSet,
    private readonly query: RuleQuery,
  ) {}

  private pathScope: RealPathScope | null = null;

  written(path: string): string | null {
    this.pathsChecked++;
    return (this.checks ??= new FileReadChecks(this.ruleSet, this.query, this)).written(path);
  }

  resolved(path: string): string | null {
    return (this.checks ??= new FileReadChecks(this.ruleSet, this.query, this)).resolved(path);
  }

  /** This decision's lookups (RealPathScope), shared by its paths and git's `.git`; made on first use. */
  scope(): RealPathScope {
    return (this.pathScope ??= { folders: [], listings: [] });
  }

  /**
   * git works on the repository it discovers: unless the workspace holds its own `.git`, that is
   * one above it (a monorepo, a dotfiles repository in the home directory), whose files
   * `git show HEAD:f`, `git log -p` and `git diff` print by the repository's paths, not ours.
   * Not counted as a path check: `npm run build && git status` stays allowed (docs/shell-rules.md#read-only-commands).
   * Looked up once per decision, on the first git command (the same line's other git commands reuse it).
   */
  repositoryTop(): string | null {
    if (this.repository !== undefined) return this.repository;
    const { realPath } = this.query;
    if (!realPath) return (this.repository = 'cannot see here whether the workspace is the top of its git repository');
    const hasGit = realPath.exists ? realPath.exists('.git', this.scope()) : realPath('.git', this.scope()) !== null;
    return (this.repository = hasGit ? null : 'the workspace has no .git of its own: git would read the repository above it, beyond the workspace');
  }
}

/** What evaluateShell reads of a command line, a pure function of its text (shared: never changed once set, but for the memos `plain` and `strict`). */
interface ShellAnalysis {
  readonly split: ShellSplit;
  /** The whole line, its `${x:-word}` defaults and every part's strict views (shell-views.ts). */
  readonly viewList: readonly string[];
  readonly lowerViews: readonly string[];
  readonly splitError: string | null;
  /** The plain-words parse, made first: on a plain line it gives the split too (one scan for deny, ask and allow). */
  readonly plainParse: PlainParse;
  /** Set on first use (plainOf): a line denied or asked for never needs it. */
  plain?: { readonly plain: PlainParse; readonly texts: readonly string[] };
  /** The deny and ask outcomes remembered for this line (rememberStrict). */
  strict?: StrictMemo;
  /** Whether the line names a program whose paths deny rules see resolved (shell-cwd.ts). */
  readonly targetsPaths: boolean;
  /** Those views, per working folder and home (resolvedOf): a few entries. */
  resolved?: { readonly root: string; readonly home: string | undefined; readonly views: ResolvedViews }[];
}

/** The line's resolved deny views for the caller's workspace and home, made once per pair (bounded). */
function resolvedOf(analysis: ShellAnalysis, query: RuleQuery): ResolvedViews {
  const { workspaceRoot: root, homeDir: home } = query;
  const known = (analysis.resolved ??= []);
  for (const entry of known) if (entry.root === root && entry.home === home) return entry.views;
  const views = resolvedViews(analysis.split.commands, root, home ?? null, analysis.viewList[0]!);
  if (known.length >= STRICT_PER_LINE) known.length = 0;
  known.push({ root, home, views });
  return views;
}

/** The plain-words parse and, for a plain line, each simple command's words joined by spaces (what allow rules match). */
function plainOf(analysis: ShellAnalysis): NonNullable<ShellAnalysis['plain']> {
  if (!analysis.plain) {
    const plain = analysis.plainParse;
    analysis.plain = { plain, texts: plain.plain ? plain.commands.map((c, i) => allowText(analysis.split, i, c.argv)) : [] };
  }
  return analysis.plain;
}

/**
 * argvText(argv) of a plain line's `i`th command: its text as the scan split it (a span of the
 * line, made already) when that command's words are argv itself (no redirections) and their
 * join, as written, is that text; else the words joined anew.
 */
function allowText(split: ShellSplit, i: number, argv: readonly string[]): string {
  const command = split.ok ? split.commands[i] : undefined;
  return command !== undefined && command.words === argv && joinsAsWritten(argv) && joinsAs(argv, command.text) ? command.text : argvText(argv);
}

/**
 * Analyses remembered by command text: splitting, views and the plain-words parse depend only on
 * the string, and an agent runs the same lines again and again. Bounded; nothing of the
 * filesystem or the rules is in it.
 */
const analyses = new Map<string, ShellAnalysis>();
const ANALYSIS_LIMIT = 1024;

function analyzeShell(command: string): ShellAnalysis {
  const known = analyses.get(command);
  if (known) return known;
  // A plain line (most of an agent's) is scanned once: the plain-words scan builds the split
  // splitShell would return (scanPlain's contract); any other line is split by splitShell.
  const scan = scanPlain(command);
  const split = scan.split ?? splitShell(command);
  const views = new Views(command);
  const defaulted = withExpansionDefaults(command);
  if (defaulted !== null) views.add(defaulted);
  const opaque: string[] = [];
  for (const part of split.commands) addStrictViews(views, part, 0, opaque);
  // A line the splitter refuses asks; its commands are still seen by deny rules (`<<EOF curl …`,
  // a comment or arithmetic before `curl …`: shell-refused.ts).
  if (!split.ok) for (const rewritten of refusedLinesForDeny(command)) for (const part of splitShell(rewritten).commands) addStrictViews(views, part, 0, []);
  // A download piped into a shell, read from the structure: `<download> | <shell>` (shell-pipe.ts).
  for (const view of pipeToShellViews(command, split.commands)) views.add(view);
  // What an allow rule matches (each command's words without its redirections, allowPhase) is
  // seen by deny and ask rules too: `2>&1 curl …` must not hide `curl …` from a deny. A command
  // of the scan's own split without redirections has the same words there, and its text as
  // allow rules see it is those words joined: its views are already in.
  if (scan.parse.plain) {
    const commands = scan.parse.commands;
    for (let c = 0; c < commands.length; c++) {
      const { argv, redirects } = commands[c]!;
      if (argv.length === 0 || (scan.split !== null && redirects.length === 0 && joinsAsWritten(argv))) continue;
      // With redirections (`git log -- x 2>/dev/null`), its words without them were already a word list of the split's command.
      if (scan.split !== null && argvViewsCovered(scan.split.commands[c]!, argv)) continue;
      addStrictViews(views, { text: argvText(argv), words: argv, kind: 'simple' }, 0, opaque);
    }
  }
  const viewList = views.list;
  const analysis: ShellAnalysis = {
    split,
    viewList,
    lowerViews: viewList.map((v) => v.toLowerCase()),
    splitError: !split.ok ? split.error : opaque.length > 0 ? opaque[0]! : null,
    plainParse: scan.parse,
    targetsPaths: mayTargetPaths(command),
  };
  if (analyses.size >= ANALYSIS_LIMIT) analyses.clear();
  analyses.set(command, analysis);
  return analysis;
}

/** Whether argvText(argv) is argv joined by spaces: no word is empty or holds whitespace. */
function joinsAsWritten(argv: readonly string[]): boolean {
  for (const word of argv) if (word === '' || hasWhitespace(word)) return false;
  return true;
}

function startsWithWords(argv: readonly string[], words: readonly string[]): boolean {
  if (argv.length < words.length) return false;
  for (let i = 0; i < words.length; i++) if (argv[i] !== words[i]) return false;
  return true;
}

/** Whether a readOnly list names the program (`cat`, or `git` for `git diff`): then its refusal explains the ask. */
function namesProgram(names: ReadonlySet<string>, program: string): boolean {
  let programs = programsOf.get(names);
  if (!programs) programsOf.set(names, (programs = new Set([...names].map((name) => name.split(' ')[0]!))));
  return programs.has(program) || names.has(program);
}

/** Per readOnly list, the programs it names (the first word of each): one lookup, not a string made per name. */
const programsOf = new WeakMap<ReadonlySet<string>, ReadonlySet<string>>();

/**
 * The rules' answer to "may file_read read this path" depends only on the rule set, the
 * participant, the workspace and the (lexical) path, so it is remembered per rule set: by
 * participant, then workspace, then path (a decision looks up its caller's map once, then each
 * path by itself: no key string made per path). The filesystem part (symlinks) is never
 * remembered: it is resolved on every decision. Bounded: all of a rule set's entries are
 * forgotten past FILE_READ_MEMO_LIMIT.
 */
class FileReadMemo {
  private readonly byCaller = new Map<string, Map<string, Map<string, string | null>>>();
  private size = 0;

  /** The paths remembered for one caller (a map the caller keeps for one decision; see remember). */
  paths(participantId: string, workspaceRoot: string): Map<string, string | null> {
    let byRoot = this.byCaller.get(participantId);
    if (!byRoot) this.byCaller.set(participantId, (byRoot = new Map()));
    let paths = byRoot.get(workspaceRoot);
    if (!paths) byRoot.set(workspaceRoot, (paths = new Map()));
    return paths;
  }

  /** Remembers `problem` for `path` in `paths` (from paths()); past the limit everything is forgotten first. Returns the map to use from now on. */
  remember(paths: Map<string, string | null>, participantId: string, workspaceRoot: string, path: string, problem: string | null): Map<string, string | null> {
    if (this.size >= FILE_READ_MEMO_LIMIT) {
      this.byCaller.clear();
      this.size = 0;
      paths = this.paths(participantId, workspaceRoot);
    }
    paths.set(path, problem);
    this.size++;
    return paths;
  }
}
const fileReadMemos = new WeakMap<RuleSet, FileReadMemo>();
const FILE_READ_MEMO_LIMIT = 4096;

function fileReadMemo(ruleSet: RuleSet): FileReadMemo {
  let memo = fileReadMemos.get(ruleSet);
  if (!memo) fileReadMemos.set(ruleSet, (memo = new FileReadMemo()));
  return memo;
}

/**
 * What a `{ readOnly }` command may read: what `file_read` may read (docs/shell-rules.md#read-only-commands).
 * A path is refused when it leaves the workspace or enters `.legion/` (lexically, then after
 * following symlinks) or when the rules do not allow `file_read` of it, as written or resolved.
 */
class FileReadChecks implements PathChecks {
  private readonly tiers: ToolTiers;
  private readonly memo: FileReadMemo;
  /** This caller's remembered paths (FileReadMemo.paths). */
  private paths: Map<string, string | null>;
  /** This decision's answers by path as written: a path named twice in one line is resolved once (the first in fields, a map only from the second on). */
  private firstResolved: string | null = null;
  private firstAnswer: string | null = null;
  private resolvedAnswers: Map<string, string | null> | null = null;

  constructor(
    ruleSet: RuleSet,
    private readonly query: RuleQuery,
    /** The decision's lookups (RealPathScope), LineChecks'. */
    private readonly lookups: { scope(): RealPathScope },
  ) {
    this.tiers = ruleSet.tiersFor('file_read');
    this.memo = fileReadMemo(ruleSet);
    this.paths = this.memo.paths(query.participantId, query.workspaceRoot);
  }

  written(value: string): string | null {
    if (value === '' || value.includes('\0')) return `the path ${JSON.stringify(value)}`;
    return this.readable(normalizeRulePath(value, this.query.workspaceRoot));
  }

  resolved(value: string): string | null {
    if (value === this.firstResolved) return this.firstAnswer;
    const known = this.resolvedAnswers?.get(value);
    if (known !== undefined) return known;
    const answer = this.resolveOnce(value);
    if (this.firstResolved === null) {
      this.firstResolved = value;
      this.firstAnswer = answer;
    } else (this.resolvedAnswers ??= new Map()).set(value, answer);
    return answer;
  }

  private resolveOnce(value: string): string | null {
    const { workspaceRoot, realPath } = this.query;
    if (!realPath) return `cannot follow symbolic links of "${normalizeRulePath(value, workspaceRoot)}" here`;
    const real = realPath(value, this.lookups.scope()); // as written: `link/..` is the link's target's parent
    if (real === null) return null; // nothing there to read
    if (real === value) return null; // the same text normalizes to the same path: no link on the way
    const lexical = normalizeRulePath(value, workspaceRoot);
    const resolved = normalizeRulePath(real, workspaceRoot);
    if (resolved === lexical) return null;
    const through = this.readable(resolved);
    return through ? `${through} (through a symbolic link from "${lexical}")` : null;
  }

  private readable(path: string): string | null {
    const { participantId, workspaceRoot } = this.query;
    const known = this.paths.get(path);
    if (known !== undefined) return known;
    const confined = confinementProblem(path);
    let problem = confined;
    if (!problem) {
      const decided = evaluateWhole(this.tiers, participantId, normalizedPathLookup(path));
      problem = decided.decision === 'allow' ? null : `file_read of "${path}" is not allowed (${decided.reason})`;
    }
    this.paths = this.memo.remember(this.paths, participantId, workspaceRoot, path, problem);
    return problem;
  }
}

/**
 * The lookup of a `file_read` call `{ path }` whose path is normalized already (normalizeRulePath
 * of a normalized path is itself): what inputLookup would return for it, without its caches.
 */
function normalizedPathLookup(path: string): Lookup {
  const values = [path];
  return (field) => (field === 'path' ? values : null);
}

/** Participant and every condition but `command` (a file redirection needs an allow whose `command` mentions `>`/`<`). */
function matchesExceptCommand(rule: CompiledRule, participantId: string, lookup: Lookup): boolean {
  if (rule.matchesParticipant && !rule.matchesParticipant(participantId)) return false;
  return fieldsMatch(rule.otherFields, rule.decision !== 'allow', lookup);
}

function matches(rule: CompiledRule, participantId: string, lookup: Lookup): boolean {
  if (rule.matchesParticipant && !rule.matchesParticipant(participantId)) return false;
  return fieldsMatch(rule.fields, rule.decision !== 'allow', lookup);
}

function fieldsMatch(fields: readonly CompiledField[], strict: boolean, lookup: Lookup): boolean {
  for (const field of fields) {
    const values = lookup(field.name, field.isPath, strict);
    if (!values) return false;
    let hit = false;
    for (const value of values) {
      if (field.test(value)) {
        hit = true;
        break;
      }
    }
    if (!hit) return false;
  }
  return true;
}

function outcome(rule: CompiledRule, view?: string): RuleOutcome {
  const reason = (rule.reason ?? `${rule.decision} by rule ${rule.id}`) + (view !== undefined ? ` (matched \`${view}\`)` : '');
  return rule.approver ? { decision: rule.decision, ruleId: rule.id, reason, approver: rule.approver } : { decision: rule.decision, ruleId: rule.id, reason };
}

/**
 * Whether one rule matches a call as a whole, without shell splitting (used for session
 * allowances, whose `command` is the exact command line the user approved).
 */
export function ruleMatchesCall(rule: CompiledRule, query: RuleQuery): boolean {
  if (!TOOL_NAME_PATTERN.test(query.toolName) || !rule.matchesTool(query.toolName)) return false;
  const input = isRecord(query.input) ? query.input : {};
  return matches(rule, query.participantId, inputLookup(input, query.workspaceRoot, query.toolName));
}

/**
 * Field values of the input as rules see them: strings as given (path fields normalized;
 * an absent `path` of a file tool is the workspace root `.`),
 * numbers and booleans as text; for strict rules an array yields its string items (so a
 * deny still catches `path: ['.env']`); anything else matches no pattern.
 */
function inputLookup(input: Record<string, unknown>, workspaceRoot: string, toolName: string): Lookup {
  // Made on first use: a shell decision often reads no field but `command`.
  let normalizedPaths: Map<string, string> | null = null;
  let strictCache: Map<string, readonly string[] | null> | null = null;
  let allowCache: Map<string, readonly string[] | null> | null = null;
  return (field, isPath, strict) => {
    const cache = strict ? (strictCache ??= new Map()) : (allowCache ??= new Map());
    const cached = cache.get(field);
    if (cached !== undefined) return cached;
    let value = Object.hasOwn(input, field) ? input[field] : undefined;
    if (value === undefined && field === 'path' && isFileTool(toolName)) value = '.';
    let values: string[] | null = null;
    if (typeof value === 'string') values = [value];
    else if (typeof value === 'number' || typeof value === 'boolean') values = [String(value)];
    else if (strict && Array.isArray(value)) values = value.filter((v): v is string => typeof v === 'string');
    if (values && isPath) {
      const known = (normalizedPaths ??= new Map());
      values = values.map((path) => {
        let n = known.get(path);
        if (n === undefined) known.set(path, (n = normalizeRulePath(path, workspaceRoot)));
        return n;
      });
    }
    cache.set(field, values);
    return values;
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
