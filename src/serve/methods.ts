import type { Core } from '../runtime/commands';
import type { MethodTable } from './method-table';

/**
 * The server side of a method table: `dispatch(method, params)` runs the entry's `serve` on
 * `core` with params the protocol already validated against the same entry (protocol.ts
 * `parseClientLine` with the same table). A method not in the table throws (the parser never
 * lets one through).
 */
export function createDispatch(core: Core, table: MethodTable): (method: string, params: unknown) => unknown {
  return (method, params) => {
    const entry = Object.hasOwn(table, method) ? table[method] : undefined;
    if (!entry) throw new Error(`unknown method "${method}"`);
    return entry.serve(core, params);
  };
}
