import { connect, isIP, type Socket } from 'node:net';
import type { ChildProcess } from 'node:child_process';
import { isLocalAddress, localAddressSet, systemAddressDeps, type AddressDeps } from './local-address';

/**
 * Host filtering for `sandbox.network: [hosts]` without a Unix socket in the sandbox (the
 * seccomp filter refuses those). Inside the sandbox a small Node relay (RELAY_SOURCE, run as
 * the sandbox's command) listens on its own loopback, sets HTTP(S)_PROXY for the real
 * command, and hands every accepted TCP connection to Legion over the Node IPC channel
 * bubblewrap inherited (the socket's file descriptor itself travels, SCM_RIGHTS). Legion
 * reads the proxy request (`CONNECT host:port` or an absolute-form `GET http://host/…`),
 * opens the connection from the host's network when the host is listed, and refuses it with
 * `403` otherwise. The command still has no network of its own: a tool that ignores the
 * proxy variables gets nothing.
 *
 * A listed name must not lead back to this machine (docs/sandbox.md#limits): the proxy resolves
 * the host itself, refuses with `403` when ANY of its addresses is local (isLocalAddress:
 * loopback, unspecified, link-local, this machine's interfaces), and connects to the first
 * address it checked, never to the name (no second resolution for a rebinding DNS to answer).
 */

/** What the proxy asks of the machine (injected by tests); `connect` opens TCP to an address already checked. */
export interface HostProxyDeps extends AddressDeps {
  connect(port: number, address: string): Socket;
}

export const systemHostProxyDeps: HostProxyDeps = {
  ...systemAddressDeps,
  connect: (port, address) => connect(port, address),
};

/** Does `host` match a `sandbox.network` entry (`example.com`, or `*.example.com` for its subdomains)? */
export function hostAllowed(host: string, allowed: readonly string[]): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return allowed.some((entry) => {
    const pattern = entry.toLowerCase();
    return pattern.startsWith('*.') ? name.endsWith(pattern.slice(1)) && name.length > pattern.length - 1 : name === pattern;
  });
}

/** Longest proxy request head read before refusing the connection. */
const MAX_HEAD = 16 * 1024;
/** A connection that sends no complete head within this time is closed. */
const HEAD_TIMEOUT_MS = 15_000;

/** Serve the connections the relay of `child` hands over; returns a function that closes them all. */
export function serveRelayedConnections(child: ChildProcess, allowed: readonly string[], deps: HostProxyDeps): () => void {
  const open = new Set<Socket>();
  const track = (socket: Socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  child.on('message', (_message: unknown, handle: unknown) => {
    if (!(handle && typeof (handle as Socket).write === 'function')) return;
    const client = handle as Socket;
    track(client);
    handleClient(client, allowed, deps, track);
  });
  return () => {
    for (const socket of open) socket.destroy();
  };
}

function handleClient(client: Socket, allowed: readonly string[], deps: HostProxyDeps, track: (socket: Socket) => void): void {
  let head = Buffer.alloc(0);
  const timer = setTimeout(() => client.destroy(), HEAD_TIMEOUT_MS);
  const refuse = (status: string, text: string) => {
    clearTimeout(timer);
    client.end(`HTTP/1.1 ${status}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`);
  };
  const onData = (chunk: Buffer) => {
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) {
      if (head.length > MAX_HEAD) refuse('431 Request Header Fields Too Large', 'proxy request head too long\n');
      return;
    }
    client.off('data', onData);
    client.pause();
    clearTimeout(timer);
    const lines = head.subarray(0, end).toString('latin1').split('\r\n');
    const [method, target, version] = (lines[0] ?? '').split(' ');
    const rest = head.subarray(end + 4);
    const parsed = parseTarget(method ?? '', target ?? '');
    if (!parsed) return refuse('400 Bad Request', 'not a proxy request (CONNECT host:port or an absolute http:// URL)\n');
    if (!hostAllowed(parsed.host, allowed)) {
      return refuse('403 Forbidden', `blocked by the sandbox: host ${parsed.host} is not in sandbox.network\n`);
    }
    const forward = (address: string) => {
      const upstream = deps.connect(parsed.port, address);
      track(upstream);
      upstream.on('error', (error) => {
        if (!client.destroyed) refuse('502 Bad Gateway', `cannot reach ${parsed.host}:${parsed.port}: ${error.message}\n`);
      });
      upstream.on('connect', () => {
        if (method === 'CONNECT') client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        else upstream.write(`${method} ${parsed.path} ${version ?? 'HTTP/1.1'}\r\n${lines.slice(1).filter((l) => !/^proxy-/i.test(l)).join('\r\n')}\r\n\r\n`);
        if (rest.length > 0) upstream.write(rest);
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
    };
    void resolveChecked(parsed.host, deps).then((checked) => {
      if (client.destroyed) return;
      if (checked.kind === 'local') {
        return refuse('403 Forbidden', `blocked by the sandbox: host ${parsed.host} resolves to a local address (${checked.address}); the sandbox's proxy reaches remote hosts only\n`);
      }
      if (checked.kind === 'unresolved') return refuse('502 Bad Gateway', `cannot resolve ${parsed.host}: ${checked.reason}\n`);
      forward(checked.address);
    });
  };
  client.on('data', onData);
}

type Checked = { kind: 'remote'; address: string } | { kind: 'local'; address: string } | { kind: 'unresolved'; reason: string };

/** Resolve `host` once (a literal is its own address) and check every address: one local address refuses the host. */
async function resolveChecked(host: string, deps: HostProxyDeps): Promise<Checked> {
  let addresses: readonly string[];
  try {
    addresses = isIP(host) !== 0 ? [host] : await deps.resolve(host);
  } catch (error) {
    return { kind: 'unresolved', reason: error instanceof Error ? error.message : String(error) };
  }
  if (addresses.length === 0) return { kind: 'unresolved', reason: 'no address' };
  const local = localAddressSet(deps);
  const found = addresses.find((address) => isIP(address) === 0 || isLocalAddress(address, local));
  if (found !== undefined) return { kind: 'local', address: found };
  return { kind: 'remote', address: addresses[0]! };
}

function parseTarget(method: string, target: string): { host: string; port: number; path: string } | undefined {
  if (method === 'CONNECT') {
    const match = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(target);
    if (!match) return undefined;
    const port = Number(match[2]);
    return port > 0 && port < 65536 ? { host: match[1]!, port, path: '' } : undefined;
  }
  if (!/^[A-Z]+$/.test(method)) return undefined;
  try {
    const url = new URL(target);
    if (url.protocol !== 'http:') return undefined;
    return { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 80), path: `${url.pathname}${url.search}` };
  } catch {
    return undefined;
  }
}

/**
 * The relay run inside the sandbox as `node -e RELAY_SOURCE <command>`: listen on the
 * sandbox's loopback, run `bash -c <command>` with the proxy variables set, hand each
 * connection to the parent, exit as the command did.
 */
export const RELAY_SOURCE = `
const net = require('node:net');
const { spawn } = require('node:child_process');
const { constants } = require('node:os');
const command = process.argv[process.argv.length - 1];
const server = net.createServer({ pauseOnConnect: true }, (socket) => {
  try { process.send('connection', socket); } catch { socket.destroy(); }
});
server.listen(0, '127.0.0.1', () => {
  const url = 'http://127.0.0.1:' + server.address().port;
  const env = { ...process.env, HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url, ALL_PROXY: url, all_proxy: url, NO_PROXY: '', no_proxy: '' };
  const child = spawn('bash', ['-c', command], { stdio: 'inherit', env });
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(sig, () => child.kill(sig));
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] || 0)));
});
`;
