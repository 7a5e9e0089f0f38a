import type { MethodTable, Served } from './method-table';

/**
 * The server side of a method table: `dispatch(method, params)` runs the entry's `serve` on
 * what is served (the core and its services) with params the protocol already validated
 * against the same entry (protocol.ts `parseClientLine` with the same table). A method not in the table throws (the parser never
 * lets one through).
 */
export function createDispatch(served: Served, table: MethodTable): (method: string, params: unknown) => unknown {
  return (method, params) => {
    const entry = Object.hasOwn(table, method) ? table[method] : undefined;
    if (!entry) throw new Error(`unknown method "${method}"`);
    return entry.serve(served, params);
  };
}
