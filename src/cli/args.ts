import { parseArgs as nodeParseArgs } from 'node:util';
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

type Token = NonNullable<ReturnType<typeof nodeParseArgs>['tokens']>[number];

/** node:util's tokens of `args` read with `spec`'s flags (the global ones win a clash). */
function tokensOf(args: readonly string[], spec: FlagSpec): Token[] {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = {};
  for (const [name, kind] of Object.entries({ ...spec, ...GLOBAL })) options[name] = { type: kind === 'boolean' ? 'boolean' : 'string' };
  options.help = { type: 'boolean', short: 'h' };
  options.version = { type: 'boolean', short: 'v' };
  return nodeParseArgs({ args: [...args], options, strict: false, allowPositionals: true, tokens: true }).tokens;
}

/**
 * The command word of argv: its first positional, the flags before it read with the default
 * command's `defaultSpec` (as `parseArgs` reads them); null when there is none or `--` comes
 * first. Lets the CLI load only that command before parsing (src/cli/commands/index.ts).
 */
export function commandWord(argv: readonly string[], defaultSpec: FlagSpec): string | null {
  for (const token of tokensOf(argv, defaultSpec)) {
    if (token.kind === 'option-terminator') return null;
    if (token.kind === 'positional') return token.value;
  }
  return null;
}

/**
 * Parse argv (without node and script) with node:util's parseArgs. The flags before the
 * command are read with `defaultCommand`'s spec, those after it with the command's. An unknown
 * command or flag, a missing value or a value on a boolean flag is a LegionError with exit
 * code 2; `--` ends flag parsing (before a command: the default command).
 */
export function parseArgs(argv: readonly string[], specs: Readonly<Record<string, FlagSpec>>, defaultCommand: string): ParsedArgs {
  const global: GlobalFlags = { help: false, version: false, plain: false };
  const flags = new Map<string, string | true>();
  const lists = new Map<string, string[]>();
  const positionals: string[] = [];
  let command: string | null = null;

  const take = (token: Token, args: readonly string[]): void => {
    if (token.kind !== 'option') return;
    const raw = args[token.index]!;
    if (!raw.startsWith('--') && raw !== '-h' && raw !== '-v') throw new LegionError(`unknown flag "${raw}" (see legion --help)`, 2);
    const name = token.name;
    const kind = GLOBAL[name] ?? specs[command ?? defaultCommand]?.[name];
    if (!kind) throw new LegionError(`unknown flag "--${name}"${command ? ` for "${command}"` : ''} (see legion --help)`, 2);
    let value: string | true = true;
    if (kind === 'value' || kind === 'values') {
      if (token.value === undefined || (!token.inlineValue && token.value.startsWith('--'))) throw new LegionError(`flag "--${name}" needs a value`, 2);
      value = token.value;
    } else if (token.value !== undefined) {
      throw new LegionError(`flag "--${name}" takes no value`, 2);
    }
    if (name in GLOBAL) {
      if (name === 'help' || name === 'version' || name === 'plain') global[name] = true;
      else global[name as 'cwd' | 'provider' | 'model'] = value as string;
    } else {
      flags.set(name, value);
      if (kind === 'values') lists.set(name, [...(lists.get(name) ?? []), value as string]);
    }
  };

  // Up to the command (the first positional), read with the default command's flags.
  let after: readonly string[] = [];
  for (const token of tokensOf(argv, specs[defaultCommand] ?? {})) {
    if (token.kind === 'option-terminator') {
      command = defaultCommand;
      positionals.push(...argv.slice(token.index + 1));
      return { command, positionals, flags, lists, global };
    }
    if (token.kind === 'positional') {
      if (!(token.value in specs)) throw new LegionError(`unknown command "${token.value}" (see legion --help)`, 2);
      command = token.value;
      after = argv.slice(token.index + 1);
      break;
    }
    take(token, argv);
  }
  // After it, with the command's own flags.
  for (const token of tokensOf(after, specs[command ?? defaultCommand] ?? {})) {
    if (token.kind === 'positional') positionals.push(token.value);
    else take(token, after);
  }
  return { command: command ?? defaultCommand, positionals, flags, lists, global };
}
