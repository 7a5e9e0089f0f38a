import type { Command } from '../command';
import { initCommand } from './init';
import { startCommand } from './start';
import { runsCommand } from './runs';
import { showCommand } from './show';

/** Every command of the CLI, in help order. Later modules add theirs here. */
export const COMMANDS: readonly Command[] = [startCommand, initCommand, runsCommand, showCommand];
