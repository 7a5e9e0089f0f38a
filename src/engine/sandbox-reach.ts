import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { lookup } from 'node:dns/promises';

/** `sandbox.network` as configured (docs/sandbox.md#allowing-the-network-for-a-workspace). */
export type SandboxNetwork = 'none' | 'all' | readonly string[];

/** What the check asks of this machine (injected by tests). */
export interface ReachDeps {
  /** The addresses of this machine's interfaces. */
  localAddresses(): readonly string[];
  /** Every address a name resolves to; rejects when it does not resolve. */
  resolve(host: string): Promise<readonly string[]>;
}

export const systemReachDeps: ReachDeps = {
  localAddresses: () => Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address)),
  resolve: async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address),
};

/**
 * The one-line refusal when a sandboxed command could reach Legion's engine (docs/sandbox.md#limits),
 * or undefined. `engine`: the engine's ingress and admin URLs (the hub); `workerHere`: this process is
 * a worker, whose feed and Restate endpoint listen on this machine by definition. Fail-closed:
 * under `network: all` an engine URL counts as reachable unless its host is proven remote (an
 * address not of this machine, or a name all of whose addresses are); a host list is refused when
 * it names an address of this machine (the proxy connects to it), whatever the engine's URLs.
 */
export async function sandboxReachRefusal(
  input: { readonly network: SandboxNetwork; readonly engine: readonly string[]; readonly workerHere: boolean },
  deps: ReachDeps = systemReachDeps,
): Promise<string | undefined> {
  const { network } = input;
  if (network === 'none') return undefined;
  const local = new Set(deps.localAddresses().map(normalAddress));
  const fix = 'use network: none or a host list, or run the engine on another host';
  if (network === 'all') {
    if (input.workerHere) return `sandbox.network: all would let a sandboxed command reach this worker's event feed and the engine's endpoint on this machine and resolve its own approvals: use network: none or a host list`;
    for (const url of input.engine) {
      if (await mayBeLocal(hostOf(url), local, deps)) return `sandbox.network: all would let a sandboxed command reach the local engine at ${url} and resolve its own approvals: ${fix}`;
    }
    return undefined;
  }
  const named = network.find((host) => literalLocal(hostOf(`http://${host.replace(/^\*\./, 'x.')}`), local));
  if (named === undefined) return undefined;
  const what = input.workerHere ? "this worker's event feed on this machine" : `the engine at ${input.engine[0] ?? 'this machine'}`;
  return `sandbox.network lists ${named}, an address of this machine, which would let a sandboxed command reach ${what} and resolve its own approvals: list remote hosts only`;
}

/** The host of a URL as the URL parser normalises it (127.1 and 2130706433 become 127.0.0.1), brackets removed; '' if it does not parse. */
function hostOf(url: string): string {
  try {
    return new URL(url).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  } catch {
    return '';
  }
}

/** Proven remote or not: a literal decides by itself; a name is remote only when it resolves, and only to remote addresses. */
async function mayBeLocal(host: string, local: ReadonlySet<string>, deps: ReachDeps): Promise<boolean> {
  if (literalLocal(host, local)) return true;
  if (isIP(host) !== 0) return false;
  try {
    const addresses = await deps.resolve(host);
    return addresses.length === 0 || addresses.some((a) => literalLocal(normalAddress(a), local));
  } catch {
    return true;
  }
}

/** `localhost` (and its subdomains), an unparsable host, a loopback or unspecified address, or an address of this machine's interfaces. */
function literalLocal(host: string, local: ReadonlySet<string>): boolean {
  if (host === '' || host === 'localhost' || host.endsWith('.localhost')) return true;
  const address = normalAddress(host);
  if (isIP(address) === 4) return address.startsWith('127.') || address.startsWith('0.') || local.has(address);
  if (isIP(address) === 6) return address === '::1' || address === '::' || local.has(address);
  return false;
}

/** An IPv4-mapped IPv6 address as its IPv4 form, an IPv6 address in its compressed form, a zone dropped. */
function normalAddress(address: string): string {
  const bare = address.replace(/%.*$/, '').toLowerCase();
  if (isIP(bare) !== 6) return bare;
  const compressed = new URL(`http://[${bare}]/`).hostname.replace(/^\[|\]$/g, '');
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(compressed);
  if (mapped) {
    const hi = parseInt(mapped[1]!, 16);
    const lo = parseInt(mapped[2]!, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return compressed;
}
