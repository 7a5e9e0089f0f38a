/**
 * A shallow copy of a plain object (its own enumerable properties, in order) for the caller to
 * add fields to: what `{ ...source, a, b }` gives, without V8's slow path for that pattern. On
 * Node 20 an object spread followed by more properties costs ~2 µs and leaves a new hidden class
 * behind each time (garbage that makes V8 run full collections); `Object.assign` onto `{}` and
 * then the fields costs ~0.08 µs (docs/engine.md#the-feed-checked-and-the-buss-stamp). Every
 * event goes through one on the bus, so this is on the path of every text delta.
 * A source with an own `__proto__` key (JSON.parse makes one from a line that has it) is copied
 * by spread, which defines it as a plain key: `Object.assign` would call the `__proto__` setter
 * and make it the copy's prototype.
 */
export function plainCopy<T extends object>(source: T): T {
  return Object.hasOwn(source, '__proto__') ? { ...source } : Object.assign({}, source);
}
