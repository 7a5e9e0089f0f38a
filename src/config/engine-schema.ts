import { z } from 'zod';

/** An http(s) URL without a trailing slash (the engine's ingress or admin API). */
const engineUrl = z
  .string()
  .url('not a URL (e.g. http://127.0.0.1:8080)')
  .refine((value) => /^https?:\/\//i.test(value), 'must be an http:// or https:// URL')
  .transform((value) => value.replace(/\/+$/, ''));

/**
 * Where turns run (docs/engine.md#configuration): in this process (the default), or on a Restate
 * engine whose `ingress` receives turns and whose `admin` API workers register with.
 */
export const engineSchema = z.discriminatedUnion('kind', [
  // URLs may stay set while another layer switches back to in-process; they are then unused.
  z.strictObject({ kind: z.literal('in-process'), ingress: engineUrl.optional(), admin: engineUrl.optional() }),
  z.strictObject({ kind: z.literal('restate'), ingress: engineUrl, admin: engineUrl }),
]);

export type EngineSettings = z.infer<typeof engineSchema>;
