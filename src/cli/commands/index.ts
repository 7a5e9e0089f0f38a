import type { Command } from '../command';
import { startCommand } from './start';

/**
 * Every command of the CLI, in help order, each loaded when first needed: a start evaluates
 * only the command it runs (docs/performance.md#start-up). The key is the command's name (the
 * loader checks it). `start` is the default command, so its flags are always needed: it is
 * small and loaded eagerly. Later modules add theirs here.
 */
const LOADERS: ReadonlyMap<string, () => Promise<Command>> = new Map<string, () => Promise<Command>>([
  ['start', async () => startCommand],
  ['run', async () => (await import('./run')).runCommand],
  ['init', async () => (await import('./init')).initCommand],
  ['runs', async () => (await import('./runs')).runsCommand],
  ['workflows', async () => (await import('./workflows')).workflowsCommand],
  ['worktrees', async () => (await import('./worktrees')).worktreesCommand],
  ['show', async () => (await import('./show')).showCommand],
  ['rules', async () => (await import('./rules')).rulesCommand],
  ['undo', async () => (await import('./undo')).undoCommand],
  ['mcp', async () => (await import('./mcp')).mcpCommand],
  ['hooks', async () => (await import('./hooks')).hooksCommand],
  ['agents', async () => (await import('./agents')).agentsCommand],
  ['serve', async () => (await import('./serve')).serveCommand],
  ['stop', async () => (await import('./stop')).stopCommand],
  ['engine', async () => (await import('./engine')).engineCommand],
  ['worker', async () => (await import('./worker')).workerCommand],
  ['trust', async () => (await import('./trust')).trustCommand],
  ['doctor', async () => (await import('./doctor')).doctorCommand],
  ['completion', async () => (await import('./completion')).completionCommand(loadCommands)],
]);

/** The names of every command, in help order. */
export const COMMAND_NAMES: readonly string[] = [...LOADERS.keys()];

/** The default command (no command word): also the one whose flags come before a command word. */
export const DEFAULT_COMMAND = startCommand;

/** The command called `name`, loaded; null for a name that is no command. */
export async function loadCommand(name: string): Promise<Command | null> {
  const load = LOADERS.get(name);
  if (!load) return null;
  const command = await load();
  if (command.name !== name) throw new Error(`the command table's "${name}" loads the command "${command.name}"`);
  return command;
}

/** Every command, loaded, in help order (for --help and completion). */
export async function loadCommands(): Promise<readonly Command[]> {
  return Promise.all(COMMAND_NAMES.map(async (name) => (await loadCommand(name))!));
}
