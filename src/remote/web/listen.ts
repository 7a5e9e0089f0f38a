/** `--web [host:]port`: 127.0.0.1 unless a host is given; IPv6 hosts in brackets (`[::1]:7420`). */
export type ListenAddress = { host: string; port: number };

export const DEFAULT_WEB_HOST = '127.0.0.1';
export const DEFAULT_WEB_PORT = 7420;

export function parseListen(spec: string): { ok: true; address: ListenAddress } | { ok: false; error: string } {
  const text = spec.trim();
  const match = /^(?:(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):)?(\d{1,5})$/.exec(text);
  if (!match) return { ok: false, error: `--web: "${spec}" is not [host:]port (e.g. 7420, 127.0.0.1:7420, [::1]:7420)` };
  const port = Number(match[2]);
  if (port > 65535) return { ok: false, error: `--web: port ${port} is out of range (0-65535)` };
  const host = match[1] ? match[1].replace(/^\[|\]$/g, '') : DEFAULT_WEB_HOST;
  return { ok: true, address: { host, port } };
}

/** Loopback hosts: only these are served without an explicit choice to listen wider. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
