import type { ParsedArgs, FlagSpec } from './args';
import type { CliIo } from './io';

/** What the composition root hands every command. */
export interface CommandContext {
  readonly args: ParsedArgs;
  readonly io: CliIo;
  /** Package root (holds config/). */
  readonly appDir: string;
  /** Absolute workspace root (`--cwd` or the process cwd). */
  readonly workspaceRoot: string;
  /**
   * Injected by the entry point so `src/` never imports the UI: `bin/legion.ts` passes
   * `startScreen` (start-screen.ts) with the loader of components/start-tui.tsx.
   */
  readonly startTui?: (options: { context: CommandContext }) => Promise<number>;
}

export interface Command {
  readonly name: string;
  readonly usage: string;
  readonly summary: string;
  readonly flags: FlagSpec;
  run(context: CommandContext): Promise<number>;
}
