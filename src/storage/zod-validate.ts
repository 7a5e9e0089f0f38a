import type { z } from 'zod';

/** Adapt a zod schema to the `validate` callback of `parseJsonl`/`readJsonl`. */
export function zodValidator<S extends z.ZodType>(schema: S): (value: unknown) => { ok: true; value: z.infer<S> } | { ok: false; error: string } {
  return (value) => {
    const result = schema.safeParse(value);
    if (result.success) return { ok: true, value: result.data };
    const first = result.error.issues[0];
    return { ok: false, error: first ? `${first.path.join('.') || '(root)'}: ${first.message}` : 'invalid' };
  };
}

/**
 * The parse options for a schema parsed once or a few times per process (config files, rule
 * files, agent files at start): no JIT. zod builds each object schema's fast path with
 * `new Function` at its first parse; that code is never in V8's code cache, costs far more
 * than one parse, and pays off only for schemas parsed thousands of times (docs/performance.md#start-up).
 */
export const ONE_SHOT: { readonly jitless: true } = { jitless: true };
