import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../storage/private-mode';
import { adminHealth } from './admin';
import { ensureSigningKey } from './identity';

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
  readonly ingress: string;
  readonly admin: string;
  /** node-to-node port (unused by Legion; taken so two engines never collide). */
  readonly nodePort: number;
  /** The public key of the engine's request identity (`publickeyv1_…`): its workers accept requests signed by it only. */
  readonly identityKey: string;
}

/**
 * The TOML config of a local engine (docs/engine.md#running-it): its data dir, its ports on
 * 127.0.0.1, the settings of a one-node engine, then `settings` (dotted keys). The journal's
 * durability is not traded: every acknowledged entry is fsynced (test/unit/engine/local-engine.test.ts).
 */
export function engineConfig(options: { dataDir: string; ingressPort: number; adminPort: number; nodePort: number; signingKeyFile: string; settings: readonly string[] }): string {
  const { ingressPort, adminPort, nodePort } = options;
  return [
    'node-name = "legion"',
    `base-dir = ${JSON.stringify(options.dataDir)}`,
    `bind-address = "127.0.0.1:${nodePort}"`,
    `advertised-address = "http://127.0.0.1:${nodePort}/"`,
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
    // (docs/engine.md#who-may-talk-to-what).
    `worker.invoker.request-identity-private-key-pem-file = ${JSON.stringify(options.signingKeyFile)}`,
    // Dotted keys, no table headers: `settings` may add keys of any table after them.
    `admin.bind-address = "127.0.0.1:${adminPort}"`,
    `ingress.bind-address = "127.0.0.1:${ingressPort}"`,
    ...(options.settings),
    '',
  ].join('\n');
}

/**
 * Start a single-node restate-server (docs/engine.md#running-it): its data in `dataDir`, its log
 * appended to `logFile`, TCP only, on free local ports; `settings`: more lines of its TOML
 * config (dotted keys, e.g. `worker.invoker.concurrent-invocations-limit = 10`; benches try
 * knobs with it). Detached (its own process group) so it
 * outlives the command that started it; resolves once the admin API and the ingress answer.
 */
export async function startLocalEngine(options: { dataDir: string; logFile: string; timeoutMs?: number; settings?: readonly string[] }): Promise<LocalEngine> {
  const binary = restateServerBinary();
  if (!binary.ok) throw new Error(binary.error);
  mkdirSync(options.dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const configFile = join(options.dataDir, 'restate.toml');
  // The same ports as last time when they are free: the URLs in a config stay valid across down/up.
  const [ingressPort, adminPort, nodePort] = (await previousPorts(configFile)) ?? [await freePort(), await freePort(), await freePort()];
  // The signing key stays across down/up: the workers' configured public key stays valid.
  const signingKeyFile = join(options.dataDir, 'request-identity.pem');
  const identityKey = ensureSigningKey(signingKeyFile);
  writeFileSync(configFile, engineConfig({ dataDir: options.dataDir, ingressPort, adminPort, nodePort, signingKeyFile, settings: options.settings ?? [] }), { mode: PRIVATE_FILE_MODE });
  const log = openSync(options.logFile, 'a', PRIVATE_FILE_MODE);
  const child = spawn(binary.path, ['--config-file', configFile, '--no-logo', '--listen-mode', 'tcp', '--log-disable-ansi-codes', 'true'], {
    detached: true, stdio: ['ignore', log, log],
  });
  closeSync(log);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.unref();
  const engine: LocalEngine = { pid: child.pid!, ingress: `http://127.0.0.1:${ingressPort}`, admin: `http://127.0.0.1:${adminPort}`, nodePort, identityKey };
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

/** The ports of an earlier start (ingress, admin, node) when all three are free (within 3 s). */
async function previousPorts(configFile: string): Promise<[number, number, number] | null> {
  let text: string;
  try {
    text = readFileSync(configFile, 'utf8');
  } catch {
    return null;
  }
  const ports = [...text.matchAll(/^(?:admin\.|ingress\.)?bind-address = "127\.0\.0\.1:(\d+)"$/gm)].map((m) => Number(m[1]));
  if (ports.length !== 3) return null;
  const [node, admin, ingress] = ports as [number, number, number];
  // A server just stopped may hold its ports a moment longer.
  for (let tries = 0; tries < 30; tries++) {
    const free = await Promise.all([ingress, admin, node].map(portFree));
    if (free.every(Boolean)) return [ingress, admin, node];
    await new Promise((r) => setTimeout(r, 100));
  }
  return null;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** The ingress answers its health check. */
export async function ingressAnswers(ingress: string): Promise<boolean> {
  try {
    const response = await fetch(`${ingress}/restate/health`, { signal: AbortSignal.timeout(2000) });
    await response.text();
    return response.ok;
  } catch {
    return false;
  }
}
