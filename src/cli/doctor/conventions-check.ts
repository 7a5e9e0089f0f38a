import { realpath } from 'node:fs/promises';
import { relative } from 'node:path';
import type { LegionConfig } from '../../config/schema';
import type { ConfigFiles } from '../../config/load';
import { loadRuleFiles, defaultRuleFiles } from '../../authz/rules/load';
import type { WorkspaceTrust } from '../../storage/workspace-trust';
import { RESOURCE_AGENT_ID, USER_ID, UR_AGENT_ID } from '../../collective/participant';
import { SHIPPED_TOOLS } from '../../collective/tools/shipped';
import { userConfigDir } from '../../storage/private-mode';
import { createProjectInstructions } from '../../conventions/instructions';
import { defaultHookFiles, loadHooks } from '../../conventions/hooks/load';
import { createHooksTrust, hooksTrustFile } from '../../conventions/hooks/trust';
import { agentFileDirs, loadAgentFiles } from '../../conventions/agent-files';
import { createSkills, skillRoots } from '../../conventions/skills';
import { secretPathRefusal } from '../compose-conventions';
import type { Check } from './checks';

/**
 * What `legion doctor` says of the formats users already have (docs/conventions.md): the
 * instructions files in the prompts, the hooks and whether the workspace's are trusted, the
 * agent files and the skills; a ✗ for what does not load or does not run, with the fix.
 */
export async function checkConventions(options: {
  readonly appDir: string;
  readonly workspaceRoot: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly home: string;
  readonly config: LegionConfig;
  readonly configFiles: ConfigFiles;
  readonly trust: WorkspaceTrust;
}): Promise<Check[]> {
  const root = await realpath(options.workspaceRoot).catch(() => options.workspaceRoot);
  const userDir = userConfigDir(options.env, options.home);
  const rules = await loadRuleFiles(defaultRuleFiles(options.appDir, root, options.env, options.trust));
  const refuse = rules.ok ? secretPathRefusal(rules.ruleSet) : (): string => 'the rules did not load';
  const show = (file: string): string => (file.startsWith(root) ? relative(root, file) : file);
  const checks: Check[] = [];

  const refused: string[] = [];
  const instructions = createProjectInstructions({
    workspaceRoot: root, userDir, files: options.config.instructions.files, refuse, notice: (level, message) => level === 'warn' && refused.push(message),
  }).current();
  const cut = instructions.filter((f) => f.cut).map((f) => ` (${show(f.file)} cut to 32 kB)`).join('');
  const problems = refused.filter((m) => !/ bytes: only its first /.test(m));
  checks.push(problems.length > 0
    ? { name: 'instructions', ok: false, detail: `instructions: ${problems.join('; ')}`, fix: 'make the file a regular file inside the workspace, or change instructions.files' }
    : { name: 'instructions', ok: true, detail: `instructions: ${instructions.length ? instructions.map((f) => show(f.file)).join(', ') : `none (${options.config.instructions.files.join(', ')} or ~/.config/legion/AGENTS.md)`}${cut}` });

  const hooks = await loadHooks(defaultHookFiles(options.configFiles, root));
  const own = hooks.hooks.filter((h) => h.fromWorkspace);
  const summary = hooks.hooks.length === 0 ? 'none' : [...new Set(hooks.hooks.map((h) => h.event))].map((e) => `${e} ×${hooks.hooks.filter((h) => h.event === e).length}`).join(', ');
  if (hooks.warnings.length > 0) checks.push({ name: 'hooks', ok: false, detail: `hooks: ${hooks.warnings.join('; ')}`, fix: 'correct the file and key named (see docs/conventions.md#hooks)' });
  if (own.length > 0) {
    const trust = await createHooksTrust({ file: hooksTrustFile(userDir), workspaceRoot: root, env: options.env }).check(hooks.hooks);
    checks.push(trust.trusted
      ? { name: 'hooks', ok: true, detail: `hooks: ${summary}; the workspace's ${own.length} trusted` }
      : { name: 'hooks', ok: false, detail: `hooks: ${summary}; the workspace's ${own.length} do not run (${trust.reason})`, fix: 'read them with `legion hooks list` (and the scripts they run), then `legion hooks trust`' });
  } else if (hooks.warnings.length === 0) checks.push({ name: 'hooks', ok: true, detail: `hooks: ${summary}` });

  const known = new Set(SHIPPED_TOOLS.map((t) => t.name));
  const agents = await loadAgentFiles(agentFileDirs(userDir, root), { toolExists: (n) => known.has(n), reserved: new Set([USER_ID, UR_AGENT_ID, RESOURCE_AGENT_ID]) });
  const agentList = agents.files.length ? agents.files.map((f) => `${f.agent.id} (${show(f.file)})`).join(', ') : 'none (.legion/agents/*.md, ~/.config/legion/agents/*.md)';
  checks.push(agents.problems.length > 0
    ? { name: 'agents', ok: false, detail: `agent files: ${agentList}; ${agents.problems.join('; ')}`, fix: 'correct the file and field named (see docs/conventions.md#agent-files)' }
    : { name: 'agents', ok: true, detail: `agent files: ${agentList}` });

  const skills = createSkills(skillRoots(root, userDir), { workspaceRoot: root, refuse });
  const skillList = skills.list().length ? skills.list().map((s) => s.name).join(', ') : 'none (.legion/skills/, .claude/skills/, ~/.config/legion/skills/)';
  checks.push(skills.problems().length > 0
    ? { name: 'skills', ok: false, detail: `skills: ${skillList}; ${skills.problems().join('; ')}`, fix: 'correct the SKILL.md named (see docs/conventions.md#skills)' }
    : { name: 'skills', ok: true, detail: `skills: ${skillList}` });
  return checks;
}
