import { homedir } from 'node:os';
import type { CommandContext } from './command';
import { LegionError } from '../errors';
import { defaultConfigFiles, loadConfig } from '../config/load';

/** The configured Restate engine; a LegionError naming what to set when none is. */
export async function engineSettings(context: CommandContext): Promise<{ ingress: string; admin: string }> {
  const env = context.io.env;
  const loaded = await loadConfig(defaultConfigFiles(context.appDir, context.workspaceRoot, env.HOME || homedir()));
  if (!loaded.ok) throw new LegionError(loaded.error);
  const engine = loaded.config.engine;
  if (engine.kind !== 'restate') {
    throw new LegionError('no engine is configured: set engine: { kind: restate, ingress: <url>, admin: <url> } (legion engine up prints them)');
  }
  return { ingress: engine.ingress, admin: engine.admin };
}
