import type { Check } from './checks';
import { IGNORED_WHEN_UNTRUSTED, type WorkspaceTrust } from '../../storage/workspace-trust';

/** `legion doctor`'s line for workspace trust (docs/workspace-trust.md). Untrusted is a ✗: the project's settings are ignored. */
export function checkWorkspaceTrustState(trust: WorkspaceTrust, legionDir: string): Check {
  if (trust.trusted) return { name: 'trust', ok: true, detail: `${legionDir} is trusted: its config, rules, participants and allowances apply` };
  if (trust.reason === 'absent') return { name: 'trust', ok: true, detail: `${legionDir} not created yet (the first start creates it trusted)` };
  return {
    name: 'trust', ok: false,
    detail: `${legionDir} is not trusted (${trust.detail}): ignoring ${IGNORED_WHEN_UNTRUSTED}`,
    fix: trust.reason === 'unsafe-key' ? 'remove the key file named, then run legion trust in each workspace you trust' : 'review .legion/ (legion trust lists what it would honour), then run legion trust',
  };
}
