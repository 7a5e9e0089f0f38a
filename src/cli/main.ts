// First: the start's garbage collection set-up, before the other modules evaluate.
import { endStartGrowth } from './start-growth';
import { resolve } from 'node:path';
import { statSync } from 'node:fs';
import { commandWord, parseArgs, type FlagSpec } from './args';
import type { Command, CommandContext } from './command';
import type { CliIo } from './io';
import { findAppDir } from './app-dir';
import { LegionError, messageOf } from '../errors';
import { DEFAULT_COMMAND, loadCommand, loadCommands } from './commands';
import { helpText } from './help';
import pkg from '../../package.json';

export const VERSION: string = pkg.version;

export interface MainOptions {
  readonly io: CliIo;
  readonly appDir?: string;
  readonly startTui?: CommandContext['startTui'];
}

/**
 * The CLI entry: parse, dispatch, and turn every failure into one line on stderr
 * (plus the stack with LEGION_DEBUG=1). Returns the exit code; never throws.
 */
export async function main(argv: readonly string[], options: MainOptions): Promise<number> {
  const { io } = options;
  try {
    // Only the command this start runs is loaded (and the default one, whose flags may come
    // before the command word): the others' code is evaluated only when they run.
    const word = commandWord(argv, DEFAULT_COMMAND.flags);
    const chosen = word === null ? DEFAULT_COMMAND : await loadCommand(word);
    const specs: Record<string, FlagSpec> = Object.create(null) as Record<string, FlagSpec>;
    specs[DEFAULT_COMMAND.name] = DEFAULT_COMMAND.flags;
    if (chosen) specs[chosen.name] = chosen.flags;
    const args = parseArgs(argv, specs, DEFAULT_COMMAND.name);
    // Only the full-screen start keeps it until its first frame.
    if (args.command !== DEFAULT_COMMAND.name || args.global.version || args.global.help) endStartGrowth();
    if (args.global.version) {
      io.stdout(`legion ${VERSION}\n`);
      return 0;
    }
    if (args.global.help) {
      io.stdout(helpText(await loadCommands(), args.command && argv.includes(args.command) && chosen ? chosen : undefined));
      return 0;
    }
    const workspaceRoot = resolve(io.cwd, args.global.cwd ?? '.');
    if (args.global.cwd) {
      let isDir = false;
      try { isDir = statSync(workspaceRoot).isDirectory(); } catch { /* reported below */ }
      if (!isDir) throw new LegionError(`--cwd ${args.global.cwd}: not a directory`, 2);
    }
    // parseArgs refused any other command word.
    const command = args.command === DEFAULT_COMMAND.name ? DEFAULT_COMMAND : chosen!;
    return await command.run({ args, io, appDir: options.appDir ?? findAppDir(), workspaceRoot, startTui: options.startTui });
  } catch (error) {
    endStartGrowth();
    const code = error instanceof LegionError ? error.exitCode : 1;
    io.stderr(`legion: ${messageOf(error).split('\n')[0]}\n`);
    if (io.env.LEGION_DEBUG === '1' && error instanceof Error && error.stack) io.stderr(error.stack + '\n');
    return code;
  }
}
