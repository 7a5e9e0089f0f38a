import type { HistorySearchResult, HistoryService, TranscriptLine, WorkflowCommands, WorkflowInfo } from '../runtime/core-api';
import type { Caller } from './caller';
import type { METHOD_TABLE, Method, ParamsOf } from './method-table';

/** What the services beside an attached core send their requests through (remote-core.ts). */
export interface RemoteLink {
  /** One request; the result checked by its entry's schema. */
  readonly call: Caller<typeof METHOD_TABLE>;
  /** A request whose refusal or failure becomes a notice on the core's bus. */
  fire<M extends Method>(method: M, params: ParamsOf<M>, sessionId?: string): void;
  connected(): boolean;
}

/** The history service of the server's workspace, over the socket: each read is one request. */
export function remoteHistory({ call }: RemoteLink): HistoryService {
  return {
    runs: () => call('runs', {}),
    runSessions: (runId) => call('runSessions', { runId }),
    transcript: async (runId, sessionId) => (await call('transcript', { runId, sessionId })) as TranscriptLine[],
    searchHistory: async (runId, query) => (await call('search', { runId, query })) as unknown as HistorySearchResult,
  };
}

/** The server's workflows, over the socket. `cancel` is sent (a refusal arrives as a notice): false only when not connected. */
export function remoteWorkflows(link: RemoteLink): WorkflowCommands {
  return {
    list: async () => (await link.call('workflows', {})) as WorkflowInfo[],
    start: async (name, input, inputs = {}) => {
      if (!link.connected()) return { ok: false, error: 'not connected to the Legion server' };
      return await link.call('startWorkflow', { name, input, inputs: { ...inputs } });
    },
    cancel(workflowId) {
      if (!link.connected()) return false;
      link.fire('cancelWorkflow', { workflowId });
      return true;
    },
  };
}
