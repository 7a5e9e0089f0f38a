import { LegionError } from '../errors';

/** Global flags, valid before or after the command. */
export interface GlobalFlags {
  cwd?: string;
  provider?: string;
  model?: string;
  help: boolean;
  version: boolean;
  plain: boolean;
}

export interface ParsedArgs {
  readonly command: string | null;
  readonly positionals: string[];
  /** Command flags: name → value (true for boolean flags; the last value of a repeatable one). */
  readonly flags: Map<string, string | true>;
  /** Every value of each repeatable (`values`) flag, in order. */
  readonly lists?: ReadonlyMap<string, readonly string[]>;
  readonly global: GlobalFlags;
}

/** Flags of each command: name → takes a value (`values`: one per use, the flag repeatable). */
export type FlagSpec = Readonly<Record<string, 'value' | 'values' | 'boolean'>>;

const GLOBAL: FlagSpec = { cwd: 'value', provider: 'value', model: 'value', help: 'boolean', version: 'boolean', plain: 'boolean' };

/**
 * Parse argv (without node and script). `specs` lists each command's flags; an unknown
 * command or flag is a LegionError with exit code 2. `--` ends flag parsing.
 */
export function parseArgs(argv: readonly string[], specs: Readonly<Record<string, FlagSpec>>, defaultCommand: string): ParsedArgs {
  const global: GlobalFlags = { help: false, version: false, plain: false };
  const flags = new Map<string, string | true>();
  const lists = new Map<string, string[]>();
  const positionals: string[] = [];
  let command: string | null = null;
  let rest = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (rest || !arg.startsWith('-') || arg === '-') {
      if (command === null && !rest) {
        if (!(arg in specs)) throw new LegionError(`unknown command "${arg}" (see legion --help)`, 2);
        command = arg;
      } else {
        positionals.push(arg);
      }
      continue;
    }
    if (arg === '--') { rest = true; if (command === null) command = defaultCommand; continue; }
    if (arg === '-h') { global.help = true; continue; }
    if (arg === '-v') { global.version = true; continue; }
    if (!arg.startsWith('--')) throw new LegionError(`unknown flag "${arg}" (see legion --help)`, 2);
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    const inline = eq === -1 ? undefined : arg.slice(eq + 1);
    const commandSpec = specs[command ?? defaultCommand] ?? {};
    const kind = GLOBAL[name] ?? commandSpec[name];
    if (!kind) throw new LegionError(`unknown flag "--${name}"${command ? ` for "${command}"` : ''} (see legion --help)`, 2);
    let value: string | true = true;
    if (kind === 'value' || kind === 'values') {
      const next = inline ?? argv[++i];
      if (next === undefined || (inline === undefined && next.startsWith('--'))) throw new LegionError(`flag "--${name}" needs a value`, 2);
      value = next;
    } else if (inline !== undefined) {
      throw new LegionError(`flag "--${name}" takes no value`, 2);
    }
    if (name in GLOBAL) {
      if (name === 'help' || name === 'version' || name === 'plain') global[name] = true;
      else global[name as 'cwd' | 'provider' | 'model'] = value as string;
    } else {
      flags.set(name, value);
      if (kind === 'values') lists.set(name, [...(lists.get(name) ?? []), value as string]);
    }
  }
  return { command: command ?? defaultCommand, positionals, flags, lists, global };
}
