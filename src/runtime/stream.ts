import { z } from 'zod';
import type { Agent } from '../collective/participant';
import type { EventBus } from '../events/bus';
import type { Message, ToolUseBlock } from '../model/message';
import { sanitizeForProvider } from '../model/repair';
import type { ProviderRequest, ToolDefinition } from '../providers/types';
import type { Tool, ToolCatalog } from '../tools/types';
import type { SecretScrubber } from '../authz/scrub';
import { messageOf } from '../errors';
import { holdsTool } from '../authz/authorizer';
import type { Journal } from './journal';
import type { ProviderChoice } from './ports';
import type { Turn } from './turn';

/** What one provider call produced. `error` and `aborted` exclude each other. */
export interface StreamResult {
  readonly text: string;
  readonly toolUses: ToolUseBlock[];
  /** Tool calls whose arguments were not valid JSON: id → why. */
  readonly inputErrors: Map<string, string>;
  readonly error?: string;
  /** The HTTP status of `error`, when there was one (400 for "prompt is too long"). */
  readonly errorStatus?: number;
  readonly aborted: boolean;
}

/** What to send instead of the whole history: the history as compacted (context-hook.ts, docs/context.md). */
export interface StreamContext {
  readonly system: string;
  readonly messages: readonly Message[];
  /** The provider's count of the request's prompt tokens (input + cache reads + cache writes). */
  onPromptTokens(tokens: number): void;
}

/** Call the model once for `turn` (the `stream` step of a turn, see agent-loop.ts). */
export type StreamOnce = (turn: Turn, choice: Extract<ProviderChoice, { ok: true }>, context?: StreamContext) => Promise<StreamResult>;

export interface StreamDeps {
  readonly bus: EventBus;
  readonly tools: ToolCatalog;
  readonly workspaceRoot: string;
  /** The root a session's tools act in (its worktree when isolated, docs/worktrees.md); default the workspace. */
  readonly rootOf?: (sessionId: string) => string;
  readonly scrub: SecretScrubber;
  /** The `usage` event of each report (journal.ts). */
  readonly usage: Journal['usage'];
  readonly notice: Journal['notice'];
  /** Appended to every system prompt (docs/conventions.md); called once per request. */
  readonly promptExtras?: PromptExtras;
}

/** The project instructions and skills for an agent's system prompt; '' when none. */
export type PromptExtras = (agent: Agent) => string;

const definitions = new WeakMap<Tool, ToolDefinition>();
const agentDefinitions = new WeakMap<Agent, { catalog: readonly Tool[]; defs: ToolDefinition[] }>();

/** The provider-facing definition of a tool (JSON Schema of its zod input), computed once. */
export function toolDefinition(tool: Tool): ToolDefinition {
  let def = definitions.get(tool);
  if (!def) {
    let schema: Record<string, unknown>;
    try {
      schema = tool.inputJsonSchema ?? z.toJSONSchema(tool.schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    } catch {
      schema = { type: 'object' };
    }
    const { $schema: _drop, ...inputSchema } = schema;
    def = { name: tool.name, description: tool.description, inputSchema };
    definitions.set(tool, def);
  }
  return def;
}

/**
 * The definitions of the tools an agent holds (names or globs), in catalog order; cached per
 * agent object and catalog (a catalog that changes, as MCP tools come and go, is a new array).
 */
export function agentToolDefinitions(tools: ToolCatalog, agent: Agent): ToolDefinition[] {
  const catalog = tools.list();
  let cached = agentDefinitions.get(agent);
  if (!cached || cached.catalog !== catalog) {
    cached = { catalog, defs: catalog.filter((tool) => holdsTool(agent.tools, tool.name)).map(toolDefinition) };
    agentDefinitions.set(agent, cached);
  }
  return cached.defs;
}

/**
 * The system prompt: the agent's own, plus where it stands in the collective, plus `extras`
 * (the project instructions and skills, docs/conventions.md), which change only when their files do.
 */
export function systemPromptOf(workspaceRoot: string, turn: Pick<Turn, 'agent' | 'session'>, extras = ''): string {
  const key = turn.session.key;
  const more = extras ? `\n\n${extras}` : '';
  return (
    `${turn.agent.systemPrompt.trimEnd()}\n\n` +
    `# Context\n` +
    `You are "${turn.agent.id}" in Legion, a collective of agents and one human user. ` +
    `You are answering "${key.initiatorId}" in session "${key.name}". ` +
    `The workspace root is ${workspaceRoot}; tools act inside it only. ` +
    `Your final message (one without tool calls) is what "${key.initiatorId}" receives.` +
    more
  );
}

/**
 * Call the provider once and stream its answer: `text-delta` per chunk, `usage` with cost.
 * Never throws: a throwing provider (a contract breach) counts as a provider error.
 */
export function createStreamOnce(deps: StreamDeps): StreamOnce {
  const { bus } = deps;
  return async (turn, request, context) => {
    const signal = turn.controller.signal;
    const sessionId = turn.session.id;
    const participantId = turn.agent.id;
    let text = '';
    const toolUses: ToolUseBlock[] = [];
    const inputErrors = new Map<string, string>();
    const seen = new Set<string>();
    let error: string | undefined;
    let errorStatus: number | undefined;
    // A key split across deltas is held back until it can be replaced whole (authz/scrub.ts).
    const secrets = deps.scrub.stream();
    const providerRequest: ProviderRequest = {
      system: context?.system ?? systemPromptOf(deps.rootOf?.(turn.session.id) ?? deps.workspaceRoot, turn, deps.promptExtras?.(turn.agent)),
      messages: sanitizeForProvider(context?.messages ?? turn.session.messages()),
      tools: agentToolDefinitions(deps.tools, turn.agent),
      model: request.model,
      maxTokens: request.maxTokens,
      meta: { participantId, sessionId, purpose: 'turn' },
      onNotice: (level, message) => deps.notice(level, message, sessionId),
    };
    try {
      for await (const event of request.provider.stream(providerRequest, signal)) {
        if (signal.aborted) break;
        switch (event.type) {
          case 'text-delta': {
            if (event.text.length === 0) break;
            text += event.text;
            const shown = secrets.push(event.text);
            if (shown) bus.emit({ type: 'text-delta', sessionId, participantId, text: shown });
            break;
          }
          case 'tool-call': {
            // Ids must be unique within the message (the session store refuses duplicates).
            let id = event.id || `call_${toolUses.length + 1}`;
            while (seen.has(id)) id = `${id}_${toolUses.length + 1}`;
            seen.add(id);
            toolUses.push({ type: 'tool_use', id, name: event.name, input: event.input });
            if (event.inputError !== undefined) inputErrors.set(id, event.inputError);
            break;
          }
          case 'usage': {
            context?.onPromptTokens(event.inputTokens + event.cacheReadTokens + event.cacheWriteTokens);
            deps.usage(sessionId, participantId, event);
            break;
          }
          case 'end':
            break;
          case 'error':
            error = event.message;
            errorStatus = event.status;
            break;
          default: {
            const never: never = event;
            void never;
          }
        }
        if (error !== undefined) break;
      }
    } catch (thrown) {
      if (!signal.aborted) error = `provider failed: ${messageOf(thrown)}`;
    }
    const held = secrets.flush();
    if (held) bus.emit({ type: 'text-delta', sessionId, participantId, text: held });
    if (signal.aborted) return { text, toolUses, inputErrors, aborted: true };
    return { text, toolUses, inputErrors, aborted: false, ...(error !== undefined ? { error } : {}), ...(errorStatus !== undefined ? { errorStatus } : {}) };
  };
}
