import { writeFile } from 'node:fs/promises';
import { testUserDir } from './trust';
import type { LegionServer } from '../../src/serve/server';
import { join } from 'node:path';
import { initWorkspace } from '../../src/collective/init';
import { createParticipantStore } from '../../src/collective/store';
import { agentSchema } from '../../src/collective/participant';
import { layoutFor } from '../../src/storage/layout';
import type { CommandContext } from '../../src/cli/command';
import { APP_DIR } from './crash-workspace';

/**
 * A workspace for `legion serve` tests: agent `worker` writes a file when asked "write …"
 * (file_write asks the user under the default rules) streams a long answer fast to "flood" and slowly to "trickle".
 */
/** What the worker streams when asked to "flood" (1.2 MB in 800-character deltas). */
export const FLOOD_TEXT = 'flooding the socket with text. '.repeat(40000);

/** What the worker streams when asked to "trickle": about 30 s of small deltas (a turn certainly running when something stops it). */
export const TRICKLE_TEXT = 'a slow answer, ten characters every 20 ms. '.repeat(350);

export const SERVE_SCRIPT = `version: 1
defaults: { chunkSize: 40, delayMs: 1 }
replies:
  - { agent: worker, on: message, when: "write", repeat: true, toolCalls: [{ name: file_write, input: { path: "out.txt", content: "hello" } }] }
  - { agent: worker, on: tool-error, repeat: true, text: "could not write: {{lastText}}" }
  - { agent: worker, on: tool-result, repeat: true, text: "wrote it" }
  - { agent: worker, on: message, when: "flood", repeat: true, chunkSize: 800, delayMs: 1, text: "${FLOOD_TEXT}" }
  - { agent: worker, on: message, when: "trickle", repeat: true, chunkSize: 10, delayMs: 20, text: "${TRICKLE_TEXT}" }
  - { agent: worker, on: message, repeat: true, text: "hello from the worker, streamed in small pieces so a client sees many deltas arrive one after another." }
`;

export async function setupServeWorkspace(dir: string): Promise<Record<string, string>> {
  await initWorkspace({ appDir: APP_DIR, workspaceRoot: dir, userDir: testUserDir(dir) });
  const store = createParticipantStore(layoutFor(dir));
  await store.save(agentSchema().parse({ id: 'worker', kind: 'agent', name: 'worker', systemPrompt: 'You are a worker.', tools: ['file_write'] }));
  const script = join(dir, '.legion', 'serve-script.yaml');
  await writeFile(script, SERVE_SCRIPT);
  return { HOME: dir, LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: script };
}

export function serveContext(workspace: string, env: Record<string, string>, flags: [string, string | true][] = []): CommandContext {
  return {
    args: { command: 'serve', positionals: [], flags: new Map(flags), global: { help: false, version: false, plain: false } },
    io: { stdout: () => undefined, stderr: () => undefined, env, cwd: workspace, isTTY: false },
    appDir: APP_DIR,
    workspaceRoot: workspace,
  };
}

/** A `legion serve` host in this process (hostServer, no addons) over `serveContext(dir, env)`, its log kept. */
export async function hostInProcess(dir: string, env: Record<string, string>, flags: [string, string | true][] = []): Promise<{ server: LegionServer; log: string[]; stop(reason: string): Promise<number> }> {
  const { hostServer } = await import('../../src/cli/serve-host');
  let stop: (reason: string) => void = () => undefined;
  let ready: (server: LegionServer) => void = () => undefined;
  const listening = new Promise<LegionServer>((r) => { ready = r; });
  const log: string[] = [];
  const hosted = hostServer(serveContext(dir, env, flags), { until: new Promise((r) => { stop = r; }), addons: [], log: (l) => log.push(l), onReady: (s) => ready(s) });
  const server = await Promise.race([listening, hosted.then((code) => { throw new Error(`legion serve ended before listening (${code}): ${log.join('\n')}`); })]);
  return { server, log, stop: (reason) => { stop(reason); return hosted; } };
}
