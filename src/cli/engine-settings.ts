import { homedir } from 'node:os';
import type { CommandContext } from './command';
import { LegionError } from '../errors';
import { defaultConfigFiles, loadConfig } from '../config/load';
import type { EngineSettings } from '../config/engine-schema';
import { layoutFor } from '../storage/layout';
import { readLocalEngine, type LocalEngineRecord } from '../engine/local-record';
import { UNIX_SCHEME } from '../engine/http-text';
import { adminHealth } from '../engine/admin';
import { ingressAnswers } from '../engine/local-engine';
import { checkWorkspaceTrust, trustPlace, type WorkspaceTrust } from '../storage/workspace-trust';

export interface EngineUrls {
  readonly ingress: string;
  readonly admin: string;
  /** The engine's request identity public keys a worker accepts (docs/engine.md#who-may-talk-to-what); empty: none known. */
  readonly identityKeys: readonly string[];
}

/** A local engine an older Legion started listens on loopback TCP, open to the machine's other users, and signs nothing. */
export const OLD_LOCAL_ENGINE = 'the local engine was started by an older Legion (on loopback TCP, which other users of this machine reach, without request identity): restart it with legion engine down, then legion engine up';

/** The record is of an engine on unix sockets whose worker checks its key (docs/engine.md#who-may-talk-to-what). */
export const isProtectedLocalEngine = (record: LocalEngineRecord): boolean =>
  record.identityKey !== undefined && record.ingress.startsWith(UNIX_SCHEME) && record.admin.startsWith(UNIX_SCHEME);

const keysOf = (key: string | readonly string[] | undefined): readonly string[] => (key === undefined ? [] : typeof key === 'string' ? [key] : key);

/**
 * The URLs of a restate engine setting: its own, or those of the workspace's local engine
 * (`legion engine up`); a LegionError saying what to run when there is none. The local
 * engine's record (`.legion/engine/engine.json`) is read only in a trusted workspace
 * (docs/workspace-trust.md): a committed one would send every turn to its author's host.
 */
export function engineUrls(engine: Extract<EngineSettings, { kind: 'restate' }>, legionDir: string, trust: WorkspaceTrust): EngineUrls {
  if (engine.ingress !== undefined && engine.admin !== undefined) return { ingress: engine.ingress, admin: engine.admin, identityKeys: keysOf(engine.identityKey) };
  if (!trust.trusted) throw new LegionError(`engine.kind is restate but ${legionDir} is not trusted, so its local engine record is ignored: run legion trust, or set engine.kind: in-process`);
  const local = readLocalEngine(legionDir);
  if (!local) throw new LegionError('engine.kind is restate but no engine runs for this workspace: start one with legion engine up, or set engine.kind: in-process');
  if (!isProtectedLocalEngine(local)) throw new LegionError(OLD_LOCAL_ENGINE);
  // The local engine's key, or the one configured (the user's own choice wins).
  return { ingress: local.ingress, admin: local.admin, identityKeys: engine.identityKey !== undefined ? keysOf(engine.identityKey) : keysOf(local.identityKey) };
}

/** The configured Restate engine's URLs; a LegionError naming what to set when none is. */
export async function engineSettings(context: CommandContext): Promise<EngineUrls> {
  const env = context.io.env;
  const trust = await checkWorkspaceTrust(trustPlace(context.workspaceRoot, env, env.HOME || homedir()));
  const loaded = await loadConfig(defaultConfigFiles(context.appDir, context.workspaceRoot, env.HOME || homedir(), trust));
  if (!loaded.ok) throw new LegionError(loaded.error);
  const engine = loaded.config.engine;
  if (engine.kind !== 'restate') {
    throw new LegionError('no engine is configured: set engine: { kind: restate } (the local engine of legion engine up) or engine: { kind: restate, ingress: <url>, admin: <url> }');
  }
  return engineUrls(engine, layoutFor(context.workspaceRoot).legionDir, trust);
}

/** The engine answers (admin API and ingress), or a LegionError in one line saying what to run. */
export async function reachEngine(urls: EngineUrls): Promise<EngineUrls> {
  if (!(await adminHealth(urls.admin)).ok || !(await ingressAnswers(urls.ingress))) {
    throw new LegionError(`the engine at ${urls.ingress} does not answer: start it with legion engine up, or set engine.kind: in-process`);
  }
  return urls;
}
