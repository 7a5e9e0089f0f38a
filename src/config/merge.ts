type Plain = Record<string, unknown>;

export function isPlainObject(value: unknown): value is Plain {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Deep-merge layers left to right: objects merge by key, anything else (arrays too) replaces. */
export function deepMerge(...layers: unknown[]): unknown {
  let out: unknown = undefined;
  for (const layer of layers) out = mergeTwo(out, layer);
  return out;
}

function mergeTwo(base: unknown, over: unknown): unknown {
  if (over === undefined) return base;
  if (isPlainObject(base) && isPlainObject(over)) {
    const out: Plain = { ...base };
    for (const [k, v] of Object.entries(over)) out[k] = mergeTwo(base[k], v);
    return out;
  }
  return over;
}

/** True when `path` exists in `value`. */
export function hasPath(value: unknown, path: readonly (string | number)[]): boolean {
  let node: unknown = value;
  for (const key of path) {
    if (!isPlainObject(node) && !Array.isArray(node)) return false;
    if (!(String(key) in (node as Plain))) return false;
    node = (node as Plain)[String(key)];
  }
  return true;
}

/** Remove the key at `path` (used to drop unknown keys after warning about them). */
export function deletePath(value: unknown, path: readonly (string | number)[]): void {
  let node: unknown = value;
  for (const key of path.slice(0, -1)) {
    if (!isPlainObject(node) && !Array.isArray(node)) return;
    node = (node as Plain)[String(key)];
  }
  if (isPlainObject(node)) delete node[String(path[path.length - 1])];
}
