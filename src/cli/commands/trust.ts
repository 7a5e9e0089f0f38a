import { execFileSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Command } from '../command';
import { LegionError } from '../../errors';
import { layoutFor } from '../../storage/layout';
import { checkWorkspaceTrust, revokeWorkspaceTrust, trustPlace, writeWorkspaceTrust, type TrustPlace } from '../../storage/workspace-trust';
import { parseYamlSource } from '../../config/yaml-source';
import { isPlainObject } from '../../config/merge';
import { parseRuleSources } from '../../authz/rules/load';
import { createParticipantStore } from '../../collective/store';
import { USER_ID } from '../../collective/participant';
import { allowancesFile, describeMatch, readAllowances } from '../../authz/allowances';
import { readLocalEngine } from '../../engine/local-record';
import { realWorkspaceRoot } from '../workspace-root';
import { hostPath } from '../../tools/host-path';
import { HARDENING } from '../../checkpoints/git';

const USAGE = 'legion trust [--list | --revoke] [--json]';

/** Config keys whose project value can loosen what agents may do or send data elsewhere (listed first, marked). */
const LOOSENING_KEYS: ReadonlySet<string> = new Set(['sandbox', 'notify', 'remote', 'engine', 'escalation', 'mcpServers', 'providers', 'provider', 'budgets', 'checkpoints', 'instructions', 'hooks']);

/**
 * `legion trust` (docs/workspace-trust.md): list what a trusted `.legion/` grants that an
 * untrusted one does not, then write the marker; `--list` only lists; `--revoke` removes the
 * marker. A workspace Legion created itself is trusted already.
 */
export const trustCommand: Command = {
  name: 'trust',
  usage: USAGE,
  summary: 'trust this workspace\'s .legion/ (its config, allow rules, approvers, allowances) after listing them; --revoke undoes it',
  flags: { list: 'boolean', revoke: 'boolean', json: 'boolean' },
  async run(context) {
    const { args, io } = context;
    if (args.positionals.length > 0) throw new LegionError(`legion trust takes no arguments (got "${args.positionals[0]}"); usage: ${USAGE}`, 2);
    if (args.flags.has('list') && args.flags.has('revoke')) throw new LegionError(`--list and --revoke do not go together; usage: ${USAGE}`, 2);
    const root = await realWorkspaceRoot(context.workspaceRoot);
    const place = trustPlace(root, io.env, io.env.HOME || homedir());
    const legionDir = layoutFor(root).legionDir;
    if (args.flags.has('revoke')) {
      const removed = await revokeWorkspaceTrust(place);
      io.stdout(removed ? `${legionDir} is no longer trusted: its config, allow rules, approvers and allowances are ignored from the next start\n` : `${legionDir} was not trusted\n`);
      return 0;
    }
    const before = await checkWorkspaceTrust(place);
    if (!before.trusted && before.reason === 'absent') {
      io.stdout(`no ${legionDir} here: nothing to trust (legion init, or the first start, creates it trusted)\n`);
      return 0;
    }
    const grants = await whatItGrants(root);
    if (args.flags.has('json')) {
      if (!args.flags.has('list')) await trustOrFail(place);
      io.stdout(JSON.stringify({ workspace: root, trusted: args.flags.has('list') ? before.trusted : true, ...(before.trusted ? {} : { was: before.reason }), grants }, null, 2) + '\n');
      return 0;
    }
    const out = io.stdout;
    out(`${legionDir}: ${before.trusted ? 'trusted' : `not trusted (${before.detail})`}\n`);
    out(grants.length === 0 ? 'it grants nothing beyond the defaults (no project config, allow rules, approvers or allowances)\n' : 'trusted, it grants:\n');
    for (const line of grants) out(`  ${line}\n`);
    const tracked = trackedByGit(root);
    if (tracked > 0) out(`note: ${tracked} file(s) of .legion/ are tracked by git: trust is of the folder, so a pull that changes them changes what you trusted (legion trust --list shows it again)\n`);
    if (args.flags.has('list')) return 0;
    await trustOrFail(place);
    out(`trusted ${root}: the above applies from the next start (moving or re-cloning the folder makes it untrusted again; legion trust --revoke undoes this)\n`);
    return 0;
  },
};

async function trustOrFail(place: TrustPlace): Promise<void> {
  const written = await writeWorkspaceTrust(place);
  if (!written.ok) throw new LegionError(`could not trust ${place.workspaceRoot}: ${written.error}`);
}

/** One line per thing a trusted `.legion/` would honour that an untrusted one does not (docs/workspace-trust.md#what-an-untrusted-legion-can-and-cannot-do). */
async function whatItGrants(root: string): Promise<string[]> {
  const layout = layoutFor(root);
  const lines: string[] = [];
  const config = await readText(layout.config);
  if (config !== null) {
    const parsed = parseYamlSource(config, layout.config);
    if (!parsed.ok) lines.push(`.legion/config.yaml: ${parsed.error} (it would stop Legion from starting)`);
    else if (isPlainObject(parsed.source.data)) {
      const keys = Object.keys(parsed.source.data).sort((a, b) => Number(LOOSENING_KEYS.has(b)) - Number(LOOSENING_KEYS.has(a)));
      for (const key of keys) lines.push(`.legion/config.yaml ${key}: ${summary((parsed.source.data as Record<string, unknown>)[key])}${LOOSENING_KEYS.has(key) ? '  (!)' : ''}`);
    }
  }
  const rules = await readText(layout.rules);
  if (rules !== null) {
    const loaded = parseRuleSources([{ file: layout.rules, text: rules }]);
    if (!loaded.ok) lines.push(`.legion/rules.yaml: ${loaded.error}`);
    else {
      for (const rule of loaded.ruleSet.rules.filter((r) => r.decision === 'allow')) lines.push(`.legion/rules.yaml:${rule.line} allow ${rule.id}: ${describeMatch(rule.spec.tool, rule.spec.match)}${rule.spec.participants ? ` as ${[rule.spec.participants].flat().join(',')}` : ''}`);
      for (const rule of loaded.ruleSet.rules.filter((r) => r.approver !== undefined)) lines.push(`.legion/rules.yaml:${rule.line} ask ${rule.id} approved first by ${rule.approver}`);
      if (/^\s*defaults\s*:/m.test(rules)) lines.push(`.legion/rules.yaml defaults: unmatched calls → ${loaded.ruleSet.unmatched}`);
    }
  }
  try {
    for (const p of await createParticipantStore(layout).loadAll({ trusted: true })) {
      if (p.kind === 'user' && p.id !== USER_ID) lines.push(`participant ${p.id}: a second user (approves everything)`);
      if (p.kind === 'agent' && (p.approvalAuthority === '*' || p.approvalAuthority.length > 0)) {
        lines.push(`participant ${p.id}: approvalAuthority ${p.approvalAuthority === '*' ? "'*' (approves every tool)" : p.approvalAuthority.join(', ')}`);
      }
    }
  } catch (error) {
    lines.push(`.legion/collective/participants: ${(error as Error).message}`);
  }
  const runs = await readdir(layout.runsDir).catch(() => [] as string[]);
  for (const runId of runs.sort()) {
    const { allowances } = await readAllowances(allowancesFile(layout, runId));
    for (const a of allowances) lines.push(`run ${runId} allowance: ${a.participantId} may ${describeMatch(a.rule.tool, a.rule.match)} without asking`);
  }
  if ((await readText(join(root, '.legion', 'models.yaml'))) !== null) lines.push('.legion/models.yaml: model prices (budgets count with them)');
  const engine = readLocalEngine(layout.legionDir);
  if (engine) lines.push(`.legion/engine/engine.json: the local engine at ${engine.ingress} (turns run there when engine.kind is restate)`);
  return lines;
}

/**
 * How many files under `.legion/` git tracks (0 outside a repository or without git). The folder
 * is not trusted yet: its `.git/config` (an archive or a copied checkout brings one) must run
 * nothing, so git's hardening options win over it (`core.fsmonitor`, hooks…).
 */
function trackedByGit(root: string): number {
  try {
    const env = { ...process.env, PATH: hostPath(process.env.PATH ?? '', root) };
    const out = execFileSync('git', [...HARDENING, '-C', root, 'ls-files', '-z', '--', '.legion'], { encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'ignore'], timeout: 5_000 });
    return out.split('\0').filter(Boolean).length;
  } catch {
    return 0;
  }
}

async function readText(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch {
    return null;
  }
}

function summary(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 100 ? `${text.slice(0, 97)}...` : text;
}
