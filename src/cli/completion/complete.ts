import { readdir, readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from '../command';
import type { FlagSpec } from '../args';
import { layoutFor } from '../../storage/layout';
import { PROVIDER_IDS } from '../../providers/select';

/** Global flags (src/cli/args.ts) and whether they take a value. */
const GLOBAL_FLAGS: FlagSpec = { cwd: 'value', provider: 'value', model: 'value', help: 'boolean', version: 'boolean', plain: 'boolean' };

/** Fixed values of some flags and positionals. */
const FLAG_VALUES: Readonly<Record<string, readonly string[]>> = { approve: ['deny', 'all'], provider: ['auto', ...PROVIDER_IDS] };
export const SHELLS = ['bash', 'zsh', 'fish'] as const;
const SUBCOMMANDS: Readonly<Record<string, readonly string[]>> = { rules: ['check', 'list', 'explain'], completion: SHELLS };

/** What the current workspace offers: read lazily, only when a completion needs it. */
export interface WorkspaceNames {
  agents(): Promise<string[]>;
  runs(): Promise<string[]>;
  /** Workflow names of the workspace's `.legion/workflows/` and the shipped `config/workflows/`. */
  workflows(): Promise<string[]>;
}

/** Active agents' ids and run ids (newest first) of the workspace at `root`; empty when there is none. */
export function workspaceNames(root: string, appDir?: string): WorkspaceNames {
  const layout = layoutFor(root);
  return {
    async workflows() {
      const dirs = [resolve(layout.legionDir, 'workflows'), ...(appDir ? [resolve(appDir, 'config', 'workflows')] : [])];
      const names = await Promise.all(dirs.map((d) => readdir(d).catch(() => [] as string[])));
      return [...new Set(names.flat().filter((f) => /\.ya?ml$/.test(f)).map((f) => f.replace(/\.ya?ml$/, '')))].sort();
    },
    async agents() {
      const files = await readdir(layout.participantsDir).catch(() => [] as string[]);
      const ids: string[] = [];
      for (const file of files.filter((f) => f.endsWith('.json')).sort()) {
        try {
          const p = JSON.parse(await readFile(resolve(layout.participantsDir, file), 'utf8')) as { id?: unknown; kind?: unknown; status?: unknown };
          if (typeof p.id === 'string' && p.kind === 'agent' && p.status !== 'retired') ids.push(p.id);
        } catch { /* a damaged file offers nothing */ }
      }
      return ids;
    },
    async runs() {
      const entries = await readdir(layout.runsDir, { withFileTypes: true }).catch(() => []);
      return entries.filter((e) => e.isDirectory()).map((e) => e.name).sort().reverse();
    },
  };
}

/**
 * Candidates for the last word of `words` (the command line after `legion`, the last word being
 * the one under the cursor, possibly empty), filtered by its prefix. Values of `--cwd`,
 * `--session` and `--model`, and other free text, get no candidates (shells then offer files).
 * `names` is built for the workspace of `--cwd` among `words`, else `cwd`.
 */
export async function complete(words: readonly string[], commands: readonly Command[], cwd: string, names: (root: string) => WorkspaceNames = workspaceNames): Promise<string[]> {
  const current = words.at(-1) ?? '';
  const before = words.slice(0, -1);
  const byName = new Map(commands.map((c) => [c.name, c]));
  let command: Command | undefined;
  let root = cwd;
  const positionals: string[] = [];
  for (let i = 0; i < before.length; i++) {
    const word = before[i]!;
    if (word.startsWith('--')) {
      const name = word.slice(2).split('=')[0]!;
      const takesValue = ['value', 'values'].includes(GLOBAL_FLAGS[name] ?? command?.flags[name] ?? '') && !word.includes('=');
      if (takesValue && i + 1 < before.length) {
        if (name === 'cwd') root = resolve(cwd, before[i + 1]!);
        i++;
      }
    } else if (!command && byName.has(word)) command = byName.get(word);
    else positionals.push(word);
  }
  const previous = before.at(-1);
  const flagName = previous?.startsWith('--') ? previous.slice(2) : null;
  const kind = flagName ? (GLOBAL_FLAGS[flagName] ?? command?.flags[flagName]) : undefined;
  let candidates: readonly string[] = [];
  if (flagName && (kind === 'value' || kind === 'values')) {
    if (flagName === 'to' || flagName === 'as') candidates = await names(root).agents();
    else if (flagName === 'workflow') candidates = await names(root).workflows();
    else if (flagName === 'run') candidates = await names(root).runs();
    else candidates = FLAG_VALUES[flagName] ?? [];
  } else if (current.startsWith('-')) {
    candidates = [...Object.keys(command?.flags ?? {}), ...Object.keys(GLOBAL_FLAGS)].map((f) => `--${f}`);
  } else if (!command) {
    candidates = commands.map((c) => c.name);
  } else if (positionals.length === 0 && SUBCOMMANDS[command.name]) {
    candidates = SUBCOMMANDS[command.name]!;
  } else if (command.name === 'show' && positionals.length === 0) {
    candidates = await names(root).runs();
  }
  return [...new Set(candidates)].filter((c) => c.startsWith(current));
}
