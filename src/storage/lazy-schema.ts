import type { z } from 'zod';

/**
 * A zod schema built at its first use, not when its module is evaluated
 * (docs/performance.md#the-start-up-snapshot). Every zod schema costs ~10 heap objects and
 * closures; a start from the snapshot deserializes every one its modules built, used or not.
 * A schema no first frame needs (a tool's arguments, a message a run only reads later) is
 * wrapped here: `lazySchema(() => z.strictObject({…}))` returns a function that builds it
 * once, at its first call, and returns the same schema after.
 *
 * The snapshot build's warm-up (bin/legion.ts) runs code that uses some of them (the shipped
 * rules' check of tool fields, the throwaway run's composition); it calls `forgetBuiltSchemas`
 * last, so the heap it writes holds none of them, and a start builds each again at its first
 * use. Validation is the same either way: the schema is the one the builder returns.
 */
export type LazySchema<S extends z.ZodType> = () => S;

/** The slots of the schemas built so far (emptied by `forgetBuiltSchemas`). */
const builtSlots = new Set<{ schema: z.ZodType | undefined }>();

/** `build` run at the first call of the result, its schema kept and returned from then on. */
export function lazySchema<S extends z.ZodType>(build: () => S): LazySchema<S> {
  const slot: { schema: S | undefined } = { schema: undefined };
  return () => {
    if (slot.schema === undefined) {
      slot.schema = build();
      builtSlots.add(slot);
    }
    return slot.schema;
  };
}

/**
 * Drop every lazy schema built so far (each is built again at its next use). For the snapshot
 * build only, after its warm-up: code still holding one keeps a working schema. Returns how many.
 */
export function forgetBuiltSchemas(): number {
  const count = builtSlots.size;
  for (const slot of builtSlots) slot.schema = undefined;
  builtSlots.clear();
  return count;
}
