import type { z } from 'zod';
import type { MethodTable } from './method-table';

/** Sends one request and resolves with the server's raw result (connection.ts `request`). */
export type SendRequest = (method: string, params: unknown) => Promise<unknown>;

/** A typed call of every method of `T`: params as the entry takes them, the result as its schema parses it. */
export type Caller<T extends MethodTable> = <M extends keyof T & string>(method: M, params: z.input<T[M]['params']>) => Promise<z.infer<T[M]['result']>>;

/**
 * The client side of a method table: each call is sent as it is and its result checked with
 * the entry's `result` schema. A result that does not parse is the server breaking the
 * protocol: the promise rejects with one line naming the method (the caller reports it),
 * never trusted.
 */
export function createCaller<T extends MethodTable>(table: T, send: SendRequest): Caller<T> {
  return async (method, params) => {
    const value = await send(method, params);
    const parsed = table[method]!.result.safeParse(value);
    if (parsed.success) return parsed.data as never;
    const first = parsed.error.issues[0];
    throw new Error(`the server's answer to ${method} is malformed: ${first ? `${first.path.join('.') || '(root)'}: ${first.message}` : 'invalid'}`);
  };
}
