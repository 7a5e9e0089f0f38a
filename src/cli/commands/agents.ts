import { copyFile, mkdir, readdir, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, join, relative, resolve } from 'node:path';
import type { Command, CommandContext } from '../command';
import { LegionError, messageOf } from '../../errors';
import { userConfigDir } from '../../storage/private-mode';
import { RESOURCE_AGENT_ID, USER_ID, UR_AGENT_ID } from '../../collective/participant';
import { SHIPPED_TOOLS } from '../../collective/tools/shipped';
import { agentFileDirs, loadAgentFiles, parseAgentFile, type AgentFileOptions } from '../../conventions/agent-files';
import { realWorkspaceRoot } from '../workspace-root';

const USAGE = 'legion agents list | import <folder> [--force]';

/**
 * `legion agents list` prints the agent files found (docs/conventions.md#agent-files) and the
 * problems of those that did not load; `import <folder>` copies Claude Code subagent files
 * (`.claude/agents`) into `.legion/agents/` and says, per file, what Legion maps or leaves out.
 */
export const agentsCommand: Command = {
  name: 'agents',
  usage: USAGE,
  summary: 'Agent files: list them, import Claude Code subagents',
  flags: { force: 'boolean' },
  async run(context) {
    const [sub, ...rest] = context.args.positionals;
    switch (sub) {
      case 'list':
        if (rest.length > 0) throw new LegionError(`usage: ${USAGE}`, 2);
        return list(context);
      case 'import':
        if (rest.length !== 1) throw new LegionError(`usage: ${USAGE}`, 2);
        return importFrom(context, rest[0]!);
      default:
        throw new LegionError(sub ? `unknown agents command "${sub}"; usage: ${USAGE}` : `usage: ${USAGE}`, 2);
    }
  },
};

function fileOptions(): AgentFileOptions {
  const known = new Set(SHIPPED_TOOLS.map((t) => t.name));
  return { toolExists: (name) => known.has(name), reserved: new Set([USER_ID, UR_AGENT_ID, RESOURCE_AGENT_ID]) };
}

function rootOf(context: CommandContext): Promise<string> {
  return realWorkspaceRoot(context.workspaceRoot);
}

async function list(context: CommandContext): Promise<number> {
  const root = await rootOf(context);
  const env = context.io.env;
  const found = await loadAgentFiles(agentFileDirs(userConfigDir(env, env.HOME || homedir()), root), fileOptions());
  for (const problem of found.problems) context.io.stderr(`legion: ${problem}\n`);
  if (found.files.length === 0) context.io.stdout('no agent files (put them in .legion/agents/*.md or ~/.config/legion/agents/*.md; see docs/conventions.md)\n');
  for (const f of found.files) {
    const where = f.fromWorkspace ? relative(root, f.file) : f.file;
    context.io.stdout(`${f.agent.id}  ${where}  tools: ${f.agent.tools.join(', ') || '(none)'}${f.agent.description ? `\n  ${f.agent.description}` : ''}\n`);
  }
  return found.problems.length > 0 ? 1 : 0;
}

async function importFrom(context: CommandContext, folder: string): Promise<number> {
  const root = await rootOf(context);
  const source = resolve(context.io.cwd, folder);
  let names: string[];
  try {
    names = (await readdir(source)).filter((n) => n.endsWith('.md')).sort();
  } catch (error) {
    throw new LegionError(`${folder}: ${messageOf(error)}`, 2);
  }
  const target = join(root, '.legion', 'agents');
  await mkdir(target, { recursive: true });
  const options = fileOptions();
  const force = context.args.flags.has('force');
  let failed = 0;
  for (const name of names) {
    const from = join(source, name);
    const to = join(target, basename(name));
    const parsed = parseAgentFile(await readFile(from, 'utf8'), from, true, options);
    if (!parsed.ok) {
      failed++;
      context.io.stdout(`skipped ${name}: ${parsed.error}\n`);
      continue;
    }
    const existing = await readFile(to, 'utf8').catch(() => null);
    if (existing !== null && !force && existing !== (await readFile(from, 'utf8'))) {
      failed++;
      context.io.stdout(`skipped ${name}: ${relative(root, to)} exists and differs (--force replaces it)\n`);
      continue;
    }
    await copyFile(from, to);
    context.io.stdout(`imported ${parsed.value.agent.id} → ${relative(root, to)}\n`);
    for (const note of parsed.value.notes) context.io.stdout(`  ${note}\n`);
  }
  if (names.length === 0) context.io.stdout(`no .md files in ${folder}\n`);
  return failed > 0 ? 1 : 0;
}
