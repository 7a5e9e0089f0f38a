import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { lookup } from 'node:dns/promises';

/**
 * The one home of "is this address this machine's" (docs/sandbox.md#limits): used by the host-list
 * proxy before every connection (host-proxy.ts) and by the engine's start-up refusal
 * (src/engine/sandbox-reach.ts). Private ranges (10/8, 172.16/12, 192.168/16, fc00::/7) are NOT
 * local: a company registry lives there; only this machine's own interface addresses among them are.
 */

/** What the checks ask of this machine (injected by tests). */
export interface AddressDeps {
  /** The addresses of this machine's interfaces. */
  localAddresses(): readonly string[];
  /** Every address a name resolves to; rejects when it does not resolve. */
  resolve(host: string): Promise<readonly string[]>;
}

export const systemAddressDeps: AddressDeps = {
  localAddresses: () => Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address)),
  resolve: async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address),
};

/** This machine's interface addresses, normalised, for `isLocalAddress`. */
export function localAddressSet(deps: Pick<AddressDeps, 'localAddresses'>): ReadonlySet<string> {
  return new Set(deps.localAddresses().map(normalAddress));
}

/**
 * Is `address` (an IP literal, any form) one that reaches this machine or its link: loopback
 * (127/8, ::1), unspecified (0/8, ::), link-local (169.254/16 with the cloud metadata service,
 * fe80::/10), their IPv4-mapped and IPv4-compatible IPv6 forms, or an address of this machine's
 * interfaces (`local`, from localAddressSet). Not an IP literal: false (names are resolved first).
 */
export function isLocalAddress(address: string, local: ReadonlySet<string>): boolean {
  const normal = normalAddress(address);
  if (local.has(normal)) return true;
  if (isIP(normal) === 4) return /^(127|0)\./.test(normal) || normal.startsWith('169.254.');
  if (isIP(normal) === 6) return normal === '::1' || normal === '::' || /^fe[89ab][0-9a-f]:/.test(normal);
  return false;
}

/** An IPv4-mapped (or IPv4-compatible) IPv6 address as its IPv4 form, an IPv6 address in its compressed form, a zone dropped. */
export function normalAddress(address: string): string {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '').toLowerCase();
  if (isIP(bare) !== 6) return bare;
  const compressed = new URL(`http://[${bare}]/`).hostname.replace(/^\[|\]$/g, '');
  const mapped = /^::(?:ffff:)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(compressed);
  if (mapped) {
    const hi = parseInt(mapped[1]!, 16);
    const lo = parseInt(mapped[2]!, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return compressed;
}
