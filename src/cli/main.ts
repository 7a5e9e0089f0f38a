import { resolve } from 'node:path';
import { statSync } from 'node:fs';
import { parseArgs } from './args';
import type { Command, CommandContext } from './command';
import type { CliIo } from './io';
import { findAppDir } from './app-dir';
import { LegionError, messageOf } from '../errors';
import { COMMANDS } from './commands';
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
  const byName = new Map<string, Command>(COMMANDS.map((c) => [c.name, c]));
  try {
    const specs = Object.fromEntries(COMMANDS.map((c) => [c.name, c.flags]));
    const args = parseArgs(argv, specs, 'start');
    if (args.global.version) {
      io.stdout(`legion ${VERSION}\n`);
      return 0;
    }
    if (args.global.help) {
      io.stdout(helpText(COMMANDS, args.command && argv.includes(args.command) ? byName.get(args.command) : undefined));
      return 0;
    }
    const workspaceRoot = resolve(io.cwd, args.global.cwd ?? '.');
    if (args.global.cwd) {
      let isDir = false;
      try { isDir = statSync(workspaceRoot).isDirectory(); } catch { /* reported below */ }
      if (!isDir) throw new LegionError(`--cwd ${args.global.cwd}: not a directory`, 2);
    }
    const command = byName.get(args.command ?? 'start')!;
    return await command.run({ args, io, appDir: options.appDir ?? findAppDir(), workspaceRoot, startTui: options.startTui });
  } catch (error) {
    const code = error instanceof LegionError ? error.exitCode : 1;
    io.stderr(`legion: ${messageOf(error).split('\n')[0]}\n`);
    if (io.env.LEGION_DEBUG === '1' && error instanceof Error && error.stack) io.stderr(error.stack + '\n');
    return code;
  }
}
