import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { Command, CommandContext } from '../command';
import { LegionError } from '../../errors';
import { layoutFor } from '../../storage/layout';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../../storage/private-mode';
import { pidIsAlive } from '../../storage/lock-file';
import { freePort, startLocalEngine } from '../../engine/local-engine';
import { engineDir, readLocalEngine, removeLocalEngine, writeLocalEngine, type LocalEngineRecord } from '../../engine/local-record';
import { workspaceTrustOf } from '../workspace-root';
import { isProtectedLocalEngine } from '../engine-settings';
import { trustPlace, type WorkspaceTrust } from '../../storage/workspace-trust';
import { trustFreshLegion } from '../../storage/fresh-trust';
import { homedir } from 'node:os';

/** `legion engine up|down`: a local Restate engine and one worker for this workspace (docs/engine.md#running-it). */
export const engineCommand: Command = {
  name: 'engine',
  usage: 'legion engine up|down',
  summary: 'start (up) or stop (down) a local Restate engine and one worker for this workspace (engine.kind: restate)',
  flags: {},
  async run(context) {
    const [action, extra] = context.args.positionals;
    if (extra !== undefined) throw new LegionError(`legion engine takes one argument, up or down (got "${extra}")`, 2);
    const trust = action === 'up' || action === 'down' ? await requireTrusted(context) : undefined;
    if (action === 'up') return up(context, trust!);
    if (action === 'down') return down(context);
    throw new LegionError(`legion engine: say up or down${action ? ` (not "${action}")` : ''}`, 2);
  },
};

/**
 * The record names the processes up and down signal (the engine's as a group): a committed one in
 * a cloned workspace would have Legion kill the user's processes (serverPid 1: all of them). Only
 * a trusted workspace's record is believed (docs/workspace-trust.md); an untrusted workspace
 * would not use the engine anyway (engine-settings.ts).
 */
async function requireTrusted(context: CommandContext): Promise<WorkspaceTrust> {
  const trust = await workspaceTrustOf(context);
  if (trust.trusted || trust.reason === 'absent') return trust;
  throw new LegionError(`${layoutFor(context.workspaceRoot).legionDir} is not trusted (${trust.detail}), so its engine record is not believed: review it, run legion trust, then legion engine`);
}

function describe(record: LocalEngineRecord, legionDir: string): string {
  return [
    `engine (restate-server, pid ${record.serverPid}): ingress ${record.ingress}, admin ${record.admin}, data in ${join(engineDir(legionDir), 'data')}`,
    `worker (legion worker, pid ${record.workerPid}): ${record.worker}`,
    `logs: ${join(legionDir, 'logs', 'engine.log')}, ${join(legionDir, 'logs', 'worker.log')}`,
    'use it: engine: { kind: restate } in .legion/config.yaml; then legion serve --detach and legion',
  ].join('\n') + '\n';
}

/** `trust`: the workspace's, checked by requireTrusted (trusted, or no `.legion/` yet). */
async function up(context: CommandContext, trust: WorkspaceTrust): Promise<number> {
  const { io } = context;
  const layout = layoutFor(context.workspaceRoot);
  const running = readLocalEngine(layout.legionDir);
  const alive = running !== null && pidIsAlive(running.serverPid) && pidIsAlive(running.workerPid);
  if (running && alive && isProtectedLocalEngine(running)) {
    io.stdout(`the local engine already runs\n${describe(running, layout.legionDir)}`);
    return 0;
  }
  if (running && alive) {
    // Started by an older Legion: on loopback TCP, its worker checking no signature (docs/engine.md#who-may-talk-to-what).
    io.stdout('restarting the local engine: an older Legion started it on loopback TCP, open to other users of this machine\n');
    await stopRecorded(running);
  } else if (running) {
    stopRecorded(running); // half of it died: start both afresh
  }
  const logs = join(layout.legionDir, 'logs');
  mkdirSync(logs, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (!trust.trusted) {
    // No `.legion/` before this command: Legion made it for the user, so it is trusted (as legion
    // init does); without the marker the worker started below would find it untrusted.
    // Checked once registered: nothing but the empty logs/ may be in it (docs/workspace-trust.md).
    const trusted = await trustFreshLegion(trustPlace(context.workspaceRoot, io.env, io.env.HOME || homedir()), layout.legionDir, { folders: ['logs'], files: [] });
    if (!trusted.ok) throw new LegionError(trusted.kind === 'stray' ? `not trusted: ${trusted.error}: review it, run legion trust, then legion engine up` : trusted.error);
  }
  const engine = await startLocalEngine({ dataDir: join(engineDir(layout.legionDir), 'data'), logFile: join(logs, 'engine.log'), env: io.env })
    .catch((error: Error) => { throw new LegionError(error.message); });
  // The worker keeps its port across down/up when it can: turns in flight stay pinned to the URL they started on.
  const portFile = join(engineDir(layout.legionDir), 'worker-port');
  const port = (await reusablePort(portFile)) ?? await freePort();
  writeFileSync(portFile, `${port}\n`, { mode: PRIVATE_FILE_MODE });
  const worker = `http://127.0.0.1:${port}`;
  const logFile = join(logs, 'worker.log');
  const log = openSync(logFile, 'a', PRIVATE_FILE_MODE);
  const from = statSync(logFile).size;
  // The same Legion (source or bundle) as this command, detached, its output in its log (a pipe
  // to this short-lived command would break once it exits): it outlives `engine up`.
  const child = spawn(process.execPath, [...process.execArgv, process.argv[1]!, '--cwd', context.workspaceRoot, 'worker', '--listen', `127.0.0.1:${port}`, '--admin', engine.admin, '--identity-key', engine.identityKey], {
    detached: true, stdio: ['ignore', log, log], env: process.env,
  });
  closeSync(log);
  let exited = false;
  child.once('exit', () => { exited = true; });
  const deadline = Date.now() + 60_000;
  let registered = false;
  while (!exited && Date.now() < deadline) {
    const text = readFileSync(logFile, 'utf8').slice(from);
    if (/legion worker: registered with /.test(text)) { registered = true; break; }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.unref();
  const record: LocalEngineRecord = { serverPid: engine.pid, workerPid: child.pid!, ingress: engine.ingress, admin: engine.admin, worker, identityKey: engine.identityKey, startedAt: new Date().toISOString() };
  if (!registered) {
    stopRecorded(record);
    throw new LegionError(`the worker did not start: see ${join(logs, 'worker.log')}`);
  }
  writeLocalEngine(layout.legionDir, record);
  io.stdout(describe(record, layout.legionDir));
  return 0;
}

/** The port recorded in `file` when it is free now. */
async function reusablePort(file: string): Promise<number | null> {
  let port: number;
  try {
    port = Number(readFileSync(file, 'utf8').trim());
  } catch {
    return null;
  }
  if (!Number.isInteger(port) || port <= 0 || port > 65535) return null;
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(null));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(port)));
  });
}

/** SIGTERM the worker, then the engine's process group; SIGKILL what is left after 10 s. */
function stopRecorded(record: LocalEngineRecord): Promise<void> {
  const signal = (pid: number, group: boolean, sig: NodeJS.Signals): void => {
    try { process.kill(group ? -pid : pid, sig); } catch { /* gone */ }
  };
  signal(record.workerPid, false, 'SIGTERM');
  signal(record.serverPid, true, 'SIGTERM');
  return (async () => {
    const deadline = Date.now() + 10_000;
    while ((pidIsAlive(record.workerPid) || pidIsAlive(record.serverPid)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    signal(record.workerPid, false, 'SIGKILL');
    signal(record.serverPid, true, 'SIGKILL');
  })();
}

async function down(context: CommandContext): Promise<number> {
  const layout = layoutFor(context.workspaceRoot);
  const record = readLocalEngine(layout.legionDir);
  if (!record) throw new LegionError('no local engine runs for this workspace (legion engine up starts one)');
  await stopRecorded(record);
  removeLocalEngine(layout.legionDir);
  context.io.stdout(`stopped the local engine (pid ${record.serverPid}) and its worker (pid ${record.workerPid}); its data stays in ${join(engineDir(layout.legionDir), 'data')}\n`);
  return 0;
}
