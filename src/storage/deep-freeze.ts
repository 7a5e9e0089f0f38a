/**
 * Freeze `value` and every object or array it holds; returns it. For results kept by a shipped
 * file's exact text while the start-up snapshot builds (docs/performance.md#the-start-up-snapshot):
 * shared by every load of that text, so none may change (each load gets its own copy).
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
