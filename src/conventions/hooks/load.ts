import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { HOOK_EVENTS, HOOK_TIMEOUT_DEFAULT_S, type HookEvent } from '../../config/hooks-schema';
import { parseYamlSource } from '../../config/yaml-source';
import { isPlainObject } from '../../config/merge';
import { surelyAbsent } from '../../storage/absent';

/** One hook command, from one file. */
export interface HookEntry {
  readonly event: HookEvent;
  readonly matcher?: string;
  readonly command: string;
  readonly timeoutMs: number;
  /** The file that defines it. */
  readonly file: string;
  /** Defined by the workspace's own files: runs only once trusted (`legion hooks trust`). */
  readonly fromWorkspace: boolean;
}

export interface HookFiles {
  /** Trusted: the shipped defaults and the user's config. */
  readonly trusted: readonly string[];
  /** The workspace's: `.legion/config.yaml`, `.claude/settings.json`, `.claude/settings.local.json`. */
  readonly workspace: readonly string[];
}

/**
 * The hook layers. The workspace's `.legion/config.yaml` is read for hooks whether or not the
 * workspace is trusted (docs/workspace-trust.md): its hooks run only once pinned by
 * `legion hooks trust` (docs/conventions.md#hooks-trust), a stricter gate of their own.
 */
export function defaultHookFiles(configFiles: { defaults: string; user: string }, workspaceRoot: string): HookFiles {
  return {
    trusted: [configFiles.defaults, configFiles.user],
    workspace: [join(workspaceRoot, '.legion', 'config.yaml'), join(workspaceRoot, '.claude', 'settings.json'), join(workspaceRoot, '.claude', 'settings.local.json')],
  };
}

const command = z.object({ type: z.string(), command: z.string().optional(), timeout: z.number().positive().max(3600).optional() });
const group = z.object({ matcher: z.string().optional(), hooks: z.array(z.unknown()) });

/**
 * Every hook of every layer, in layer order (Claude Code runs the hooks of all its settings
 * files, so layers add up instead of replacing each other). A file that is missing has none;
 * a problem is a warning naming the file and the path, and skips only what it names.
 */
export async function loadHooks(files: HookFiles): Promise<{ hooks: HookEntry[]; warnings: string[] }> {
  const hooks: HookEntry[] = [];
  const warnings: string[] = [];
  const layers = [...files.trusted.map((f) => ({ file: f, fromWorkspace: false })), ...files.workspace.map((f) => ({ file: f, fromWorkspace: true }))];
  for (const { file, fromWorkspace } of layers) {
    if (surelyAbsent(file)) continue;
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      continue;
    }
    let data: unknown;
    if (file.endsWith('.json')) {
      try {
        data = JSON.parse(text);
      } catch (error) {
        warnings.push(`${file}: not valid JSON (${(error as Error).message}); its hooks do not run`);
        continue;
      }
    } else {
      const parsed = parseYamlSource(text, file);
      if (!parsed.ok) continue; // the config loader reports it
      data = parsed.source.data;
    }
    if (!isPlainObject(data) || data.hooks === undefined) continue;
    collect(data.hooks, file, fromWorkspace, file.endsWith('.json'), hooks, warnings);
  }
  return { hooks, warnings };
}

function collect(raw: unknown, file: string, fromWorkspace: boolean, warnKeys: boolean, out: HookEntry[], warnings: string[]): void {
  if (!isPlainObject(raw)) {
    warnings.push(`${file}: hooks: must map event names to lists; its hooks do not run`);
    return;
  }
  for (const [event, groups] of Object.entries(raw)) {
    if (!(HOOK_EVENTS as readonly string[]).includes(event)) {
      if (warnKeys) warnings.push(`${file}: hooks.${event}: Legion does not run this event (it runs ${HOOK_EVENTS.join(', ')})`);
      continue;
    }
    if (!Array.isArray(groups)) {
      warnings.push(`${file}: hooks.${event}: must be a list of { matcher, hooks }`);
      continue;
    }
    groups.forEach((g, i) => {
      const checked = group.safeParse(g);
      if (!checked.success) {
        warnings.push(`${file}: hooks.${event}.${i}: ${checked.error.issues[0]!.path.join('.') || '(entry)'}: ${checked.error.issues[0]!.message}`);
        return;
      }
      checked.data.hooks.forEach((h, j) => {
        const where = `${file}: hooks.${event}.${i}.hooks.${j}`;
        const one = command.safeParse(h);
        if (!one.success) {
          warnings.push(`${where}: ${one.error.issues[0]!.path.join('.') || '(entry)'}: ${one.error.issues[0]!.message}`);
          return;
        }
        if (one.data.type !== 'command' || !one.data.command) {
          warnings.push(`${where}: only "type: command" hooks with a command run in Legion (this one is skipped)`);
          return;
        }
        if (warnKeys && isPlainObject(h)) {
          const extra = Object.keys(h).filter((k) => !['type', 'command', 'timeout'].includes(k));
          if (extra.length > 0) warnings.push(`${where}: ${extra.join(', ')} not supported by Legion (the hook runs without ${extra.length > 1 ? 'them' : 'it'})`);
        }
        out.push({
          event: event as HookEvent,
          ...(checked.data.matcher !== undefined ? { matcher: checked.data.matcher } : {}),
          command: one.data.command,
          timeoutMs: Math.round((one.data.timeout ?? HOOK_TIMEOUT_DEFAULT_S) * 1000),
          file,
          fromWorkspace,
        });
      });
    });
  }
}
