import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { z } from 'zod';
import { composeApp, type AppSession } from '../../../src/cli/compose';
import { startServer, type LegionServer } from '../../../src/serve/server';
import { connectServer, RemoteError, type Connection } from '../../../src/serve/connection';
import { METHOD_TABLE, METHODS, type Method, type MethodEntry, type MethodTable } from '../../../src/serve/method-table';
import { createCaller } from '../../../src/serve/caller';
import { attachRemote } from '../../../src/serve/remote-core';
import type { Core } from '../../../src/runtime/commands';
import { withTempDir } from '../../helpers/tmp';
import { serveContext, setupServeWorkspace } from '../../helpers/serve-workspace';

/**
 * The protocol has one table (src/serve/method-table.ts, docs/serve.md#protocol): the parser,
 * the server's dispatch and the remote client all derive from it. These tests fail when a
 * command of the core or of a service beside it (history, workflows) is reachable through two
 * entries or none, when an entry's server side answers
 * something its client side rejects, and when a method added to the table needs any other edit
 * to be dispatched and called.
 */

/** Core methods deliberately not on the wire: the server's own lifecycle, what only the composition root calls, and the engine's `delegated` (its workers call it, docs/engine.md#delegation). */
const NOT_ON_THE_WIRE = new Set(['shutdown', 'appendNote', 'prepareIsolation', 'onResync', 'onLink', 'delegated']);
/** Composite entries: built from several reads (the snapshot is every read in one synchronous step). */
const COMPOSITE = new Set<Method>(['snapshot']);

interface Served { app: AppSession; server: LegionServer; socket: string }

async function serve(dir: string, methods?: MethodTable): Promise<Served> {
  const env = await setupServeWorkspace(dir);
  const app = await composeApp(serveContext(dir, env));
  const socket = join(dir, '.legion', 'serve.sock');
  const server = await startServer({ core: app.core, history: app.history, workflows: app.workflows, socketPath: socket, workspace: dir, version: 'test', log: () => undefined, ...(methods ? { methods } : {}) });
  return { app, server, socket };
}

async function stop(s: Served, ...connections: Connection[]): Promise<void> {
  for (const c of connections) c.close();
  await s.server.close('test over');
  await s.app.close('test over');
}

/** The commands (`core.send`, `history.runs`…) an entry's `serve` calls, on a core and services that record every method read. */
function commandsCalledBy(entry: MethodEntry): string[] {
  const called: string[] = [];
  const recorder = (owner: string): unknown => new Proxy({}, {
    get: (_t, name) => (typeof name === 'string' ? (...args: unknown[]) => { void args; called.push(`${owner}.${name}`); return true; } : undefined),
  });
  const served = { core: recorder('core'), history: recorder('history'), workflows: recorder('workflows') } as unknown as Parameters<MethodEntry['serve']>[0];
  const params = new Proxy({}, { get: (_t, name) => (name === 'inputs' ? {} : typeof name === 'string' ? 'x' : undefined) });
  try { entry.serve(served, params); } catch { /* a recording core answers nonsense; only the calls count */ }
  return [...new Set(called)];
}

/** The functions of `owner`, named as `commandsCalledBy` names them. */
const commandsOf = (name: string, owner: object, except: ReadonlySet<string> = new Set()): string[] =>
  Object.keys(owner).filter((k) => typeof (owner as Record<string, unknown>)[k] === 'function' && !except.has(k)).map((k) => `${name}.${k}`);

test('every command of the core and of its history and workflow services has exactly one table entry, and every entry reaches one command', { timeout: 60_000 }, async () => {
  await withTempDir(async (dir) => {
    const s = await serve(dir);
    try {
      const coreCommands = [...commandsOf('core', s.app.core, NOT_ON_THE_WIRE), ...commandsOf('history', s.app.history), ...commandsOf('workflows', s.app.workflows)];
      assert.ok(coreCommands.length >= 20 && coreCommands.includes('history.searchHistory') && coreCommands.includes('workflows.start'), `commands: ${coreCommands.join(', ')}`);
      // The core carries the run commands only: history and workflows are the services beside it, locally and attached.
      const remote = await attachRemote({ socket: s.socket, client: 'test' });
      try {
        for (const core of [s.app.core, remote.core] as object[]) {
          const strays = Object.keys(core).filter((k) => /^(runs|runSessions|transcript|searchHistory|workflows|startWorkflow|cancelWorkflow)$/.test(k));
          assert.deepEqual(strays, [], 'no history or workflow method on a core');
        }
        assert.deepEqual(Object.keys(remote.history).sort(), Object.keys(s.app.history).sort(), 'the attached history service has the local one\'s methods');
        assert.deepEqual(Object.keys(remote.workflows).sort(), Object.keys(s.app.workflows).sort(), 'the attached workflows have the local ones\' methods');
      } finally {
        await remote.core.shutdown('test over');
      }
      const owners = new Map<string, Method[]>();
      for (const method of METHODS) {
        if (COMPOSITE.has(method)) continue;
        const called = commandsCalledBy(METHOD_TABLE[method]);
        assert.equal(called.length, 1, `${method} reaches exactly one command (reaches: ${called.join(', ') || 'none'})`);
        owners.set(called[0]!, [...(owners.get(called[0]!) ?? []), method]);
      }
      for (const command of coreCommands) assert.deepEqual(owners.get(command)?.length, 1, `${command} has exactly one protocol entry (has: ${owners.get(command)?.join(', ') ?? 'none'})`);
      for (const command of owners.keys()) assert.ok(coreCommands.includes(command), `an entry calls ${command}, which the core and its services do not have`);
    } finally {
      await stop(s);
    }
  });
});

test('what the server answers to every read, the client side of the same entry accepts', { timeout: 60_000 }, async () => {
  await withTempDir(async (dir) => {
    const s = await serve(dir);
    const c = await connectServer({ socket: s.socket, onEvent: () => undefined });
    try {
      const call = createCaller(METHOD_TABLE, (m, p) => c.request(m as Method, p as never));
      const opened = await call('openSession', { responderId: 'worker', name: 'probe' });
      assert.equal(opened.ok, true);
      const sessionId = (opened as { sessionId: string }).sessionId;
      const sent = await call('send', { responderId: 'worker', text: 'hello', name: 'probe' });
      assert.equal(sent.ok, true);
      assert.match(await call('idle', { sessionId }), /hello from the worker/);
      const runId = s.app.core.runId;
      const reads: { [M in Method]?: unknown } = {
        participants: await call('participants', {}), sessions: await call('sessions', {}), history: await call('history', { sessionId }),
        contextRecords: await call('contextRecords', { sessionId }), pendingApprovals: await call('pendingApprovals', {}), usage: await call('usage', {}),
        snapshot: await call('snapshot', {}), lastOutcome: await call('lastOutcome', { sessionId }), runs: await call('runs', {}),
        runSessions: await call('runSessions', { runId }), transcript: await call('transcript', { runId, sessionId }),
        search: await call('search', { runId, query: 'worker' }), workflows: await call('workflows', {}),
      };
      assert.ok((reads.history as unknown[]).length >= 2);
      assert.equal((reads.lastOutcome as { kind: string }).kind, 'done');
      assert.ok((reads.search as { hits: unknown[] }).hits.length > 0);
      assert.deepEqual(await call('cancel', { sessionId }), null);
      assert.deepEqual(await call('cancelWorkflow', { workflowId: 'wf-none' }), { ok: false, error: 'no running workflow wf-none' });
    } finally {
      await stop(s, c);
    }
  });
});

test('a method added to the table is parsed, dispatched and callable with no other edit; its schemas hold on both sides', { timeout: 60_000 }, async () => {
  const echo = {
    params: z.strictObject({ word: z.string().max(10) }),
    result: z.strictObject({ runId: z.string(), word: z.string() }),
    serve: ({ core }: { core: Core }, p: { word: string }) => (p.word === 'lie' ? { runId: 7 } : { runId: core.runId, word: p.word }),
  } satisfies MethodEntry;
  const table = { ...METHOD_TABLE, echo };
  await withTempDir(async (dir) => {
    const s = await serve(dir, table);
    const c = await connectServer({ socket: s.socket, onEvent: () => undefined });
    try {
      const call = createCaller(table, (m, p) => c.request(m as Method, p as never));
      assert.deepEqual(await call('echo', { word: 'hi' }), { runId: s.app.core.runId, word: 'hi' });
      // The server validates the new entry's params…
      await assert.rejects(call('echo', { word: 'far too long a word' }), (e: unknown) => e instanceof RemoteError && e.kind === 'bad-params');
      await assert.rejects(call('echo', { word: 'hi', extra: 1 } as never), (e: unknown) => e instanceof RemoteError && e.kind === 'bad-params');
      // …and the client checks its result.
      await assert.rejects(call('echo', { word: 'lie' }), /the server's answer to echo is malformed: runId/);
      // The existing methods are untouched.
      assert.ok(Array.isArray(await call('participants', {})));
    } finally {
      await stop(s, c);
    }
  });
  // A server with the standard table does not know it.
  await withTempDir(async (dir) => {
    const s = await serve(dir);
    const c = await connectServer({ socket: s.socket, onEvent: () => undefined });
    try {
      await assert.rejects(c.request('echo' as Method, {} as never), (e: unknown) => e instanceof RemoteError && e.kind === 'unknown-method');
    } finally {
      await stop(s, c);
    }
  });
});

test('the remote core refuses a server whose answer breaks the entry\'s result schema', { timeout: 60_000 }, async () => {
  const table = { ...METHOD_TABLE, runs: { ...METHOD_TABLE.runs, serve: () => [{ id: 42 }] } } as MethodTable;
  await withTempDir(async (dir) => {
    const s = await serve(dir, table);
    const remote = await attachRemote({ socket: s.socket, client: 'test' });
    try {
      await assert.rejects(remote.history.runs(), /the server's answer to runs is malformed/);
      assert.ok((await remote.history.runSessions(s.app.core.runId)).length >= 0);
    } finally {
      await remote.core.shutdown('test over');
      await stop(s);
    }
  });
});
