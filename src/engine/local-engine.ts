import { spawn } from 'node:child_process';
import { closeSync, openSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { ensurePrivateFolder, PRIVATE_FILE_MODE } from '../storage/private-mode';
import { shellEnvironment } from '../tools/shell-env';
import { adminHealth } from './admin';
import { ensureSigningKey } from './identity';
import { requestText, unixSocketUrl } from './http-text';

/** The restate-server binary of this platform (the optional dependency of @restatedev/restate-server), or why there is none. */
export function restateServerBinary(): { ok: true; path: string } | { ok: false; error: string } {
  const name = `@restatedev/restate-server-${process.platform}-${process.arch}`;
  try {
    const require = createRequire(import.meta.url);
    return { ok: true, path: join(require.resolve(`${name}/package.json`), '..', 'bin', 'restate-server') };
  } catch {
    return { ok: false, error: `restate-server is not installed for ${process.platform}-${process.arch} (${name}; npm install @restatedev/restate-server)` };
  }
}

/** A free TCP port on 127.0.0.1 (taken by the caller right after; a small race accepted). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface LocalEngine {
  readonly pid: number;
  /** The ingress, on a unix socket in the engine's 0700 folder (`http+unix://…`, http-text.ts). */
  readonly ingress: string;
  /** The admin API, likewise. */
  readonly admin: string;
  /** The public key of the engine's request identity (`publickeyv1_…`): its workers accept requests signed by it only. */
  readonly identityKey: string;
}

/** restate-server's node name: its sockets are `<dataDir>/legion/{ingress,admin,fabric}.sock`. */
const NODE_NAME = 'legion';
/** The longest path a unix socket may have here (sun_path is 108 bytes with its terminating NUL). */
const MAX_SOCKET_PATH = 107;

/** Where the local engine's ingress and admin API listen (docs/engine.md#who-may-talk-to-what). */
export function engineSockets(dataDir: string): { ingress: string; admin: string } {
  return { ingress: join(dataDir, NODE_NAME, 'ingress.sock'), admin: join(dataDir, NODE_NAME, 'admin.sock') };
}

/**
 * The TOML config of a local engine (docs/engine.md#running-it): its data dir, the settings of a
 * one-node engine, its request identity's signing key, then `settings` (dotted keys). It listens
 * on unix sockets only (`--listen-mode unix`, in `dataDir`). The journal's durability is not
 * traded: every acknowledged entry is fsynced (test/unit/engine/local-engine.test.ts).
 */
export function engineConfig(options: { dataDir: string; signingKeyFile: string; settings: readonly string[] }): string {
  return [
    `node-name = "${NODE_NAME}"`,
    `base-dir = ${JSON.stringify(options.dataDir)}`,
    // A laptop-sized engine: one partition, a small RocksDB cache.
    'default-num-partitions = 1',
    'rocksdb-total-memory-size = "128 MiB"',
    // One node: the log in a local RocksDB loglet (each append fsynced before it is acknowledged,
    // as with the replicated loglet's log-server) instead of the replicated loglet's sequencer and
    // log-server round trip; RocksDB's perf counters (metrics only) off. Measured on the floor
    // (docs/engine.md#performance): ~0.3 ms less per journal entry, ~1.5 ms of the engine's CPU
    // less per turn. An engine already provisioned keeps the log provider it has.
    'bifrost.default-provider = "local"',
    'rocksdb-perf-level = "disable"',
    // A local engine contacts no one: restate-server's start-up telemetry (a request to GitHub)
    // is off, as everything else Legion starts stays on the machine.
    'disable-telemetry = true',
    // Every request to a worker signed with the engine's key: the worker refuses any other
    // (docs/engine.md#who-may-talk-to-what). Dotted keys, no table headers: `settings` may add
    // keys of any table after them.
    `worker.invoker.request-identity-private-key-pem-file = ${JSON.stringify(options.signingKeyFile)}`,
    ...(options.settings),
    '',
  ].join('\n');
}

/** Beyond the allow-list every program Legion starts gets: restate-server's own settings and Rust's log knobs. */
const ENGINE_ENV_PASS: readonly string[] = ['RESTATE_*', 'RUST_LOG', 'RUST_BACKTRACE'];

/**
 * The environment restate-server runs with (docs/engine.md#running-it): the allow-list of
 * src/tools/shell-env.ts plus its own `RESTATE_*` settings, so Legion's provider keys and tokens
 * ($ANTHROPIC_API_KEY, $LEGION_TELEGRAM_TOKEN, $GITHUB_TOKEN…) never reach it; its temporary
 * folders (an `invoker-<id>` folder per partition, left behind when it stops) in `tmpDir`, inside
 * its private data folder, not in the shared /tmp.
 */
export function engineEnvironment(source: Readonly<Record<string, string | undefined>>, tmpDir: string): Record<string, string> {
  return { ...shellEnvironment(source, ENGINE_ENV_PASS), TMPDIR: tmpDir };
}

/** The engine's temporary folder in `dataDir`, made private; the empty folders an earlier run left there removed. */
function engineTmpDir(dataDir: string): string {
  const dir = join(dataDir, 'tmp');
  ensurePrivateFolder(dir);
  for (const name of readdirSync(dir)) {
    if (!name.startsWith('invoker-')) continue;
    try { rmdirSync(join(dir, name)); } catch { /* not empty: kept */ }
  }
  return dir;
}

/**
 * Start a single-node restate-server (docs/engine.md#running-it): its data in `dataDir` (made
 * 0700: the folder that keeps its sockets from other users), its log appended to `logFile`,
 * listening on unix sockets only; `settings`: more lines of its TOML config (dotted keys, e.g.
 * `worker.invoker.concurrent-invocations-limit = 10`; benches try knobs with it). Detached (its
 * own process group) so it outlives the command that started it; resolves once the admin API
 * and the ingress answer. `env`: the environment it is started from (only engineEnvironment's part passes).
 */
export async function startLocalEngine(options: { dataDir: string; logFile: string; env: Readonly<Record<string, string | undefined>>; timeoutMs?: number; settings?: readonly string[] }): Promise<LocalEngine> {
  const binary = restateServerBinary();
  if (!binary.ok) throw new Error(binary.error);
  const sockets = engineSockets(options.dataDir);
  const longest = Math.max(Buffer.byteLength(sockets.ingress), Buffer.byteLength(sockets.admin));
  if (longest > MAX_SOCKET_PATH) {
    throw new Error(`the engine's sockets would be at ${sockets.ingress} (${longest} bytes; a unix socket's path may have ${MAX_SOCKET_PATH}): run it from a workspace with a shorter path, or run an engine of your own (docs/engine.md#configuration)`);
  }
  ensurePrivateFolder(options.dataDir);
  const configFile = join(options.dataDir, 'restate.toml');
  // The signing key stays across down/up: the workers' configured public key stays valid.
  const signingKeyFile = join(options.dataDir, 'request-identity.pem');
  const identityKey = ensureSigningKey(signingKeyFile);
  writeFileSync(configFile, engineConfig({ dataDir: options.dataDir, signingKeyFile, settings: options.settings ?? [] }), { mode: PRIVATE_FILE_MODE });
  const log = openSync(options.logFile, 'a', PRIVATE_FILE_MODE);
  const child = spawn(binary.path, ['--config-file', configFile, '--no-logo', '--listen-mode', 'unix', '--log-disable-ansi-codes', 'true'], {
    detached: true, stdio: ['ignore', log, log], env: engineEnvironment(options.env, engineTmpDir(options.dataDir)),
  });
  closeSync(log);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.unref();
  const engine: LocalEngine = { pid: child.pid!, ingress: unixSocketUrl(sockets.ingress), admin: unixSocketUrl(sockets.admin), identityKey };
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  let gone: number | null | undefined;
  void exited.then((code) => { gone = code; });
  for (;;) {
    if (gone !== undefined) throw new Error(`restate-server exited (${gone}) while starting: see ${options.logFile}`);
    if ((await adminHealth(engine.admin)).ok && (await ingressAnswers(engine.ingress))) return engine;
    if (Date.now() > deadline) {
      try { process.kill(-engine.pid, 'SIGKILL'); } catch { /* already gone */ }
      throw new Error(`restate-server did not answer within ${Math.round((options.timeoutMs ?? 30_000) / 1000)} s: see ${options.logFile}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The ingress answers its health check. */
export async function ingressAnswers(ingress: string): Promise<boolean> {
  try {
    const answer = await requestText(`${ingress}/restate/health`, {}, 2000);
    return answer.status >= 200 && answer.status < 300;
  } catch {
    return false;
  }
}
