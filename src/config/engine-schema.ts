import { z } from 'zod';
import { lazySchema } from '../storage/lazy-schema';

/**
 * An http(s) URL without a trailing slash (the engine's ingress or admin API), or `http+unix://`
 * and a percent-encoded socket path (an engine on a unix socket; src/engine/http-text.ts).
 */
const engineUrl = () =>
  z
  .string()
  .url('not a URL (e.g. http://127.0.0.1:8080)')
  .refine((value) => /^(https?|http\+unix):\/\//i.test(value), 'must be an http://, https:// or http+unix:// URL')
  .transform((value) => value.replace(/\/+$/, ''));

/** A request identity public key as Restate writes it: `publickeyv1_` and the raw Ed25519 key in base58 (src/engine/identity.ts). */
export const IDENTITY_KEY_PATTERN = /^publickeyv1_[1-9A-HJ-NP-Za-km-z]{32,44}$/;

/**
 * The engine's request identity public key(s) (`publickeyv1_…`, as restate-server logs it): a
 * worker serves only requests signed by one of them (docs/engine.md#who-may-talk-to-what). A list
 * while a key is rotated.
 */
const identityKey = () => {
  const key = z.string().regex(IDENTITY_KEY_PATTERN, 'not a request identity public key (publickeyv1_… as restate-server logs it)');
  return z.union([key, z.array(key).min(1, 'name at least one key')]).optional();
};

/**
 * Where turns run (docs/engine.md#configuration): in this process (the default), or on a Restate
 * engine whose `ingress` receives turns and whose `admin` API workers register with.
 */
export const engineSchema = lazySchema(() => z.discriminatedUnion('kind', [
  
  // URLs may stay set while another layer switches back to in-process; they are then unused.
  z.strictObject({ kind: z.literal('in-process'), ingress: engineUrl().optional(), admin: engineUrl().optional(), identityKey: identityKey() }),
  // Without URLs: the workspace's local engine, started by `legion engine up` (.legion/engine/engine.json).
  z.strictObject({ kind: z.literal('restate'), ingress: engineUrl().optional(), admin: engineUrl().optional(), identityKey: identityKey() })
    .refine((e) => (e.ingress === undefined) === (e.admin === undefined), { message: 'set both ingress and admin, or neither (the local engine of legion engine up)', path: ['ingress'] }),
]));

export type EngineSettings = z.infer<ReturnType<typeof engineSchema>>;
