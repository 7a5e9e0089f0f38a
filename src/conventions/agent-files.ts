import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { agentSchema, participantIdSchema, type Agent } from '../collective/participant';
import { parseFrontMatter } from './front-matter';
import { CLAUDE_TOOL_NAMES } from './hooks/tool-names';
import { ONE_SHOT } from '../storage/zod-validate';
import { surelyAbsent } from '../storage/absent';

/** An agent file that loaded, with what was mapped from Claude Code's format (for `legion agents import` and doctor). */
export interface AgentFile {
  readonly file: string;
  readonly agent: Agent;
  readonly fromWorkspace: boolean;
  /** One line per thing mapped or left out ("tools: Bash → shell", "model: sonnet → the run's model"). */
  readonly notes: readonly string[];
}

/** The tools an agent file without `tools` gets (Claude Code: every tool of the main conversation). */
export const AGENT_FILE_DEFAULT_TOOLS: readonly string[] = [
  'file_read', 'file_write', 'file_edit', 'file_list', 'file_delete', 'glob', 'grep', 'shell', 'todo_write', 'todo_read',
  'communicator', 'list_participants', 'skill', 'mcp__*',
];

/** Claude Code's model aliases: the run's own model stands in. */
const MODEL_ALIASES = new Set(['inherit', 'sonnet', 'opus', 'haiku', 'default']);
/** Claude Code keys with no meaning here, accepted silently. */
const IGNORED_KEYS = new Set(['color']);
const KNOWN_KEYS = new Set(['name', 'description', 'tools', 'model', 'approvalAuthority', 'isolation', 'provider']);

export type AgentFileParse = { readonly ok: true; readonly value: AgentFile } | { readonly ok: false; readonly error: string };

export interface AgentFileOptions {
  /** Whether a tool exists (an MCP name `mcp__…` is accepted as is: its server may start later). */
  readonly toolExists: (name: string) => boolean;
  /** Ids of the shipped participants, which a file may not redefine. */
  readonly reserved: ReadonlySet<string>;
}

/**
 * One agent file: front matter `name` (the id), `description`, `tools` (a list or a
 * comma-separated string; Claude Code's names mapped to Legion's), `model`, and Legion's
 * `approvalAuthority` and `isolation`; the body is the system prompt. A problem is one line
 * naming the file, the line and the field. `approvalAuthority` is honoured only in the user's
 * own folder: a cloned repository must not make an agent that approves for others.
 */
export function parseAgentFile(text: string, file: string, fromWorkspace: boolean, options: AgentFileOptions): AgentFileParse {
  const front = parseFrontMatter(text, file);
  if (!front.ok) return front;
  const { data, body } = front;
  const fail = (key: string, message: string): AgentFileParse => ({ ok: false, error: `${file}:${front.lineOf(key)}: ${key}: ${message}` });
  const notes: string[] = [];

  const id = participantIdSchema().safeParse(data.name, ONE_SHOT);
  if (data.name === undefined) return { ok: false, error: `${file}:2: name: missing (the agent's id, e.g. name: code-reviewer)` };
  if (!id.success) return fail('name', id.error.issues[0]!.message);
  if (options.reserved.has(id.data)) return fail('name', `"${id.data}" is one of Legion's own participants; choose another name`);
  if (data.description !== undefined && typeof data.description !== 'string') return fail('description', 'must be text');
  if (!body) return { ok: false, error: `${file}: the body (the agent's system prompt, after the front matter) is empty` };

  let tools: string[];
  if (data.tools === undefined) {
    tools = [...AGENT_FILE_DEFAULT_TOOLS];
    notes.push('tools: none listed: the workspace tools, communicator, list_participants, skill and MCP tools');
  } else {
    const listed = typeof data.tools === 'string' ? data.tools.split(',') : Array.isArray(data.tools) ? data.tools : null;
    if (!listed || listed.some((t) => typeof t !== 'string')) return fail('tools', 'must be a list of tool names or a comma-separated string');
    tools = [];
    for (const raw of listed as string[]) {
      const name = raw.trim();
      if (!name) continue;
      const mapped = CLAUDE_TOOL_NAMES[name];
      if (mapped) {
        notes.push(`tools: ${name} → ${mapped.join(', ')}`);
        tools.push(...mapped);
      } else if (name.startsWith('mcp__') || options.toolExists(name)) tools.push(name);
      else notes.push(`tools: ${name} has no Legion equivalent (left out)`);
    }
    tools = [...new Set(tools)];
  }

  let model = 'default';
  if (data.model !== undefined) {
    if (typeof data.model !== 'string' || !data.model.trim()) return fail('model', 'must be a model name');
    if (MODEL_ALIASES.has(data.model)) {
      if (data.model !== 'default' && data.model !== 'inherit') notes.push(`model: ${data.model} (a Claude Code alias) → the run's model`);
    } else model = data.model;
  }

  const extra: Record<string, unknown> = {};
  if (data.approvalAuthority !== undefined) {
    if (fromWorkspace) notes.push('approvalAuthority: ignored in a workspace agent file (set it in ~/.config/legion/agents/ or with modify_agent)');
    else extra.approvalAuthority = data.approvalAuthority;
  }
  if (data.isolation !== undefined) {
    if ('isolation' in agentSchema().shape) extra.isolation = data.isolation;
    else notes.push('isolation: not available in this version of Legion (ignored)');
  }
  if (data.provider !== undefined) extra.provider = data.provider;
  for (const key of Object.keys(data)) {
    if (!KNOWN_KEYS.has(key) && !IGNORED_KEYS.has(key)) notes.push(`${key}: not used by Legion (ignored)`);
  }

  const checked = agentSchema().safeParse({
    id: id.data, name: id.data, description: (data.description as string | undefined) ?? '', kind: 'agent', status: 'active',
    systemPrompt: body, model, tools, createdBy: 'agent-file', ...extra,
  }, ONE_SHOT);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    const key = String(issue.path[0] ?? 'name');
    return fail(key, issue.message);
  }
  return { ok: true, value: { file, agent: checked.data, fromWorkspace, notes } };
}

/** Every `*.md` of the folders, in folder then name order; an id defined twice: the later folder wins, said as a problem. */
export async function loadAgentFiles(
  dirs: readonly { readonly dir: string; readonly fromWorkspace: boolean }[],
  options: AgentFileOptions,
): Promise<{ files: AgentFile[]; problems: string[] }> {
  const byId = new Map<string, AgentFile>();
  const problems: string[] = [];
  for (const { dir, fromWorkspace } of dirs) {
    if (surelyAbsent(dir)) continue;
    let names: string[];
    try {
      names = (await readdir(dir)).filter((n) => n.endsWith('.md')).sort();
    } catch {
      continue;
    }
    for (const name of names) {
      const file = join(dir, name);
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (error) {
        problems.push(`${file}: cannot read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
        continue;
      }
      const parsed = parseAgentFile(text, file, fromWorkspace, options);
      if (!parsed.ok) {
        problems.push(parsed.error);
        continue;
      }
      const previous = byId.get(parsed.value.agent.id);
      if (previous) problems.push(`${file}: name: "${parsed.value.agent.id}" is also defined by ${previous.file} (this one is used)`);
      byId.set(parsed.value.agent.id, parsed.value);
    }
  }
  return { files: [...byId.values()], problems };
}

/** The folders agent files are read from: the user's, then the workspace's (which wins on a shared id). */
export function agentFileDirs(userDir: string, workspaceRoot: string): { dir: string; fromWorkspace: boolean }[] {
  return [{ dir: join(userDir, 'agents'), fromWorkspace: false }, { dir: join(workspaceRoot, '.legion', 'agents'), fromWorkspace: true }];
}
