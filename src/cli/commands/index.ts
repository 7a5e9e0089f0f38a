import type { Command } from '../command';
import { initCommand } from './init';
import { startCommand } from './start';
import { runCommand } from './run';
import { runsCommand } from './runs';
import { showCommand } from './show';
import { rulesCommand } from './rules';
import { undoCommand } from './undo';
import { doctorCommand } from './doctor';
import { completionCommand } from './completion';
import { mcpCommand } from './mcp';
import { hooksCommand } from './hooks';
import { agentsCommand } from './agents';
import { serveCommand } from './serve';
import { stopCommand } from './stop';
import { workflowsCommand } from './workflows';
import { workerCommand } from './worker';
import { engineCommand } from './engine';
import { worktreesCommand } from './worktrees';

/** Every command of the CLI, in help order. Later modules add theirs here. */
export const COMMANDS: readonly Command[] = [startCommand, runCommand, initCommand, runsCommand, workflowsCommand, worktreesCommand, showCommand, rulesCommand, undoCommand, mcpCommand, hooksCommand, agentsCommand, serveCommand, stopCommand, engineCommand, workerCommand, doctorCommand, completionCommand(() => COMMANDS)];
