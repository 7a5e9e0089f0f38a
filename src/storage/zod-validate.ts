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
