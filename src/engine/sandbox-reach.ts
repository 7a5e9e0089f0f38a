import { isIP } from 'node:net';
import { UNIX_SCHEME } from './http-text';
import { isLocalAddress, localAddressSet, systemAddressDeps, type AddressDeps } from '../tools/sandbox/local-address';

/** `sandbox.network` as configured (docs/sandbox.md#allowing-the-network-for-a-workspace). */
export type SandboxNetwork = 'none' | 'all' | readonly string[];

/** What the check asks of this machine (injected by tests); the address test is src/tools/sandbox/local-address.ts. */
export type ReachDeps = AddressDeps;

export const systemReachDeps: ReachDeps = systemAddressDeps;

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
  const local = localAddressSet(deps);
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

/**
 * The host of a URL as the URL parser normalises it (127.1 and 2130706433 become 127.0.0.1),
 * brackets removed; '' (this machine) if it does not parse or names a unix socket (`http+unix://`).
 */
function hostOf(url: string): string {
  if (url.startsWith(UNIX_SCHEME)) return '';
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
    return addresses.length === 0 || addresses.some((a) => isLocalAddress(a, local));
  } catch {
    return true;
  }
}

/** `localhost` (and its subdomains), an unparsable host, or a local address (isLocalAddress). */
function literalLocal(host: string, local: ReadonlySet<string>): boolean {
  if (host === '' || host === 'localhost' || host.endsWith('.localhost')) return true;
  return isLocalAddress(host, local);
}
