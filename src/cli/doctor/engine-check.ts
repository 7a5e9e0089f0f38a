import type { EngineSettings } from '../../config/engine-schema';
import { adminHealth, listDeployments } from '../../engine/admin';
import { ingressAnswers } from '../../engine/local-engine';
import { SESSION_OBJECT } from '../../engine/session-object';
import { MAILBOX_OBJECT } from '../../engine/mailbox';
import type { Check } from './checks';
import { engineUrls, type EngineUrls } from '../engine-settings';
import { messageOf } from '../../errors';
import type { WorkspaceTrust } from '../../storage/workspace-trust';
import { sandboxReachRefusal, type ReachDeps, type SandboxNetwork } from '../../engine/sandbox-reach';

/**
 * `legion doctor` with an engine configured (docs/engine.md#running-it): the admin API and the
 * ingress answer, and a worker registered Legion's session object.
 */
export async function checkEngine(settings: EngineSettings, legionDir: string, trust: WorkspaceTrust): Promise<Check> {
  if (settings.kind !== 'restate') return { name: 'engine', ok: true, detail: 'engine: in-process (turns run in the Legion process)' };
  let engine: EngineUrls;
  try {
    engine = engineUrls(settings, legionDir, trust);
  } catch (error) {
    return { name: 'engine', ok: false, detail: messageOf(error).split(':')[0]!, fix: 'start one with legion engine up, or set engine.kind: in-process' };
  }
  const start = 'start it with legion engine up, or set engine.kind: in-process';
  const health = await adminHealth(engine.admin);
  if (!health.ok) return { name: 'engine', ok: false, detail: `the engine's admin API at ${engine.admin} does not answer (${health.error})`, fix: start };
  if (!(await ingressAnswers(engine.ingress))) return { name: 'engine', ok: false, detail: `the engine's ingress at ${engine.ingress} does not answer`, fix: start };
  const deployments = await listDeployments(engine.admin);
  if (!deployments.ok) return { name: 'engine', ok: false, detail: `the engine's deployments: ${deployments.error}`, fix: start };
  const workers = deployments.value.filter((d) => d.services.includes(SESSION_OBJECT));
  if (workers.length === 0) {
    return { name: 'engine', ok: false, detail: `the engine at ${engine.ingress} answers, but no worker registered ${SESSION_OBJECT}`, fix: 'start one: legion worker (or legion engine up)' };
  }
  // A worker of an older version serves turns but not the mailboxes approvals across a chain need (docs/engine.md#approvals-across-objects).
  const old = workers.filter((d) => !d.services.includes(MAILBOX_OBJECT));
  if (old.length > 0) {
    return {
      name: 'engine', ok: false, detail: `the worker at ${old.map((w) => w.uri).join(', ')} does not serve ${MAILBOX_OBJECT} (an older version of Legion)`,
      fix: 'replace it with a worker of this version (docs/engine.md#upgrades-and-versions)',
    };
  }
  // A worker of this workspace refuses to start without the engine's key (docs/engine.md#who-may-talk-to-what).
  if (engine.identityKeys.length === 0) {
    return {
      name: 'engine', ok: false, detail: 'engine.identityKey is not set: legion worker does not start without the engine\'s request identity key',
      fix: 'set engine.identityKey to the public key (publickeyv1_…) restate-server logs at start with worker.invoker.request-identity-private-key-pem-file',
    };
  }
  return { name: 'engine', ok: true, detail: `engine: restate at ${engine.ingress}; workers registered at ${workers.map((w) => w.uri).join(', ')}` };
}

/**
 * `legion doctor` with an engine configured: whether a sandboxed command could reach it and
 * resolve its own approvals (docs/sandbox.md#limits) — the start refuses that combination.
 */
/** Where a refusal's what ends and its fix begins (sandbox-reach.ts). */
const APPROVALS = 'resolve its own approvals: ';

export async function checkEngineSandbox(settings: EngineSettings, network: SandboxNetwork, legionDir: string, trust: WorkspaceTrust, deps?: ReachDeps): Promise<Check> {
  if (settings.kind !== 'restate') return { name: 'engine sandbox', ok: true, detail: 'engine sandbox: no engine' };
  let engine: EngineUrls;
  try {
    engine = engineUrls(settings, legionDir, trust);
  } catch {
    return { name: 'engine sandbox', ok: true, detail: 'engine sandbox: no engine URLs to check' };
  }
  const refusal = await sandboxReachRefusal({ network, engine: [engine.ingress, engine.admin], workerHere: false }, deps);
  if (refusal) {
    const cut = refusal.indexOf(APPROVALS) + APPROVALS.length - 2;
    return { name: 'engine sandbox', ok: false, detail: `${refusal.slice(0, cut)} (legion refuses to start)`, fix: refusal.slice(cut + 2) };
  }
  return { name: 'engine sandbox', ok: true, detail: `engine sandbox: a sandboxed command cannot reach the engine (sandbox.network: ${typeof network === 'string' ? network : 'a host list'})` };
}
