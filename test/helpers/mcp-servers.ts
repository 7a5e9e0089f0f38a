import { createServer } from 'node:net';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { McpServerSpec, McpTransportSpec } from '../../src/mcp/servers';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The real reference servers (devDependencies), run from node_modules: never a download. */
export const EVERYTHING_BIN = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
export const FILESYSTEM_BIN = join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
export const MCP_FIXTURES = join(ROOT, 'test/fixtures/mcp');

export function stdioSpec(name: string, command: string, args: readonly string[], extra: Partial<McpServerSpec> = {}): McpServerSpec {
  const transport: McpTransportSpec = { kind: 'stdio', command, args, env: {}, cwd: ROOT, hostPrefix: join(tmpdir(), 'legion-test-npm-project') };
  return { name, transport, timeoutMs: 20_000, startTimeoutMs: 20_000, fromWorkspace: false, fingerprint: 'test', ...extra };
}

export const everythingStdio = (extra: Partial<McpServerSpec> = {}): McpServerSpec => stdioSpec('everything', process.execPath, [EVERYTHING_BIN, 'stdio'], extra);

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const port = (probe.address() as { port: number }).port;
      probe.close(() => resolve(port));
    });
  });
}

export interface HttpEverything {
  readonly url: string;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * server-everything over streamable HTTP (`index.js streamableHttp`, port from `PORT`): it
 * cannot be told to pick a port itself and report it, so a free port is found first; ready
 * when it logs "listening". `fixedPort` starts it again where a killed copy listened.
 */
export async function startEverythingHttp(fixedPort?: number): Promise<HttpEverything> {
  for (let attempt = 0; ; attempt++) {
    const port = fixedPort ?? await freePort();
    const child = spawn(process.execPath, [EVERYTHING_BIN, 'streamableHttp'], { env: { PATH: process.env.PATH ?? '', PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    const ok = await new Promise<boolean>((resolve) => {
      let text = '';
      const onData = (chunk: Buffer): void => {
        text += chunk.toString();
        if (/listening on port/.test(text)) resolve(true);
        if (/already in use|Failed/.test(text)) resolve(false);
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', () => resolve(false));
    });
    const stop = (): Promise<void> => new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
    if (ok) return { url: `http://127.0.0.1:${port}/mcp`, child, stop };
    await stop();
    if (attempt >= 3) throw new Error('server-everything (streamableHttp) did not start');
  }
}
