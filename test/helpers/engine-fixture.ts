import { spawn, type ChildProcess } from 'node:child_process';
import { testUserDir } from './trust';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createConnection, createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { initWorkspace } from '../../src/collective/init';
import { createParticipantStore } from '../../src/collective/store';
import { agentSchema } from '../../src/collective/participant';
import { layoutFor } from '../../src/storage/layout';
import { createRunStore } from '../../src/session/run-store';
import { randomIds, sessionIdOf } from '../../src/session/ids';
import { freePort, startLocalEngine, type LocalEngine } from '../../src/engine/local-engine';
import { requestText } from '../../src/engine/http-text';
import { attachRemote, type RemoteCore } from '../../src/serve/remote-core';
import { until } from './processes';
import { APP_DIR } from './crash-workspace';
import { REPO_ROOT } from './bundle';
import { withTempDir } from './tmp';

/**
 * Engine tests (docs/engine.md): a real restate-server, `legion worker` processes, and a fake
 * OpenAI-compatible model server that counts requests and knows which ones it finished.
 */

export interface ModelRequest {
  /** The conversation sent (role and content of each message), as JSON: equal strings = the same call. */
  readonly history: string;
  /** The last message's role: `user` (a new message) or `tool` (results came back). */
  readonly last: string;
  /** The system prompt (which agent asks). */
  readonly system: string;
  finished: boolean;
  /** When each chunk of the answer was written (ms since the epoch, sub-ms: `performance.timeOrigin + performance.now()`). */
  readonly writtenAt: number[];
}

/** What a scripted model answers to one request: a tool call, or a text streamed in pieces. */
export type ScriptedAnswer =
  | { readonly call: { readonly name: string; readonly args: unknown } }
  | { readonly calls: readonly { readonly name: string; readonly args: unknown }[] }
  | { readonly text: string };

/** Asked per request (the last message's text as `lastText`); undefined: the default answer. */
export type ModelScript = (request: { readonly system: string; readonly last: string; readonly lastText: string }) => ScriptedAnswer | undefined;

export interface FakeModel {
  readonly url: string;
  readonly requests: ModelRequest[];
  /** Resolves when a request matching `what` has written `chunks` chunks of its answer. */
  streaming(what: (r: ModelRequest) => boolean, chunks: number): Promise<void>;
  close(): Promise<void>;
}

/** Every answer reports 10 prompt and 5 completion tokens with its last chunk. */
const chunk = (delta: unknown, finish: string | null = null): string =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'fake', choices: [{ index: 0, delta, finish_reason: finish }], ...(finish ? { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } } : {}) })}\n\n`;

/**
 * The model: to a new user message it answers with one `shell` call running `sh tool.sh`; once
 * the result is back it streams `answerChunks` pieces of text, `delayMs` apart.
 */
export async function startFakeModel(options: { answerChunks: number; delayMs: number; script?: ModelScript }): Promise<FakeModel> {
  const requests: ModelRequest[] = [];
  const waiters: (() => void)[] = [];
  const progress = new Map<ModelRequest, number>();
  const server: Server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (d: Buffer) => { body += d.toString(); });
    req.on('end', () => {
      const parsed = JSON.parse(body) as { messages: { role: string; content: unknown }[] };
      const messages = parsed.messages.filter((m) => m.role !== 'system');
      const system = JSON.stringify(parsed.messages.filter((m) => m.role === 'system').map((m) => m.content));
      const request: ModelRequest = { history: JSON.stringify(messages.map((m) => [m.role, m.content])), last: messages.at(-1)?.role ?? '', system, finished: false, writtenAt: [] };
      requests.push(request);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const pieces: string[] = [chunk({ role: 'assistant', content: '' })];
      const content = messages.at(-1)?.content;
      const lastText = typeof content === 'string' ? content : JSON.stringify(content ?? '');
      const scripted = options.script?.({ system, last: request.last, lastText });
      if (scripted && ('call' in scripted || 'calls' in scripted)) {
        const calls = 'call' in scripted ? [scripted.call] : scripted.calls;
        calls.forEach((call, index) => {
          pieces.push(chunk({ tool_calls: [{ index, id: `call_${requests.length}_${index}`, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } }] }));
        });
        pieces.push(chunk({}, 'tool_calls'));
      } else if (scripted) {
        for (let i = 0; i < scripted.text.length; i += 40) pieces.push(chunk({ content: scripted.text.slice(i, i + 40) }));
        pieces.push(chunk({}, 'stop'));
      } else if (request.last === 'user') {
        pieces.push(chunk({ tool_calls: [{ index: 0, id: `call_${requests.length}`, type: 'function', function: { name: 'shell', arguments: JSON.stringify({ command: 'sh tool.sh' }) } }] }));
        pieces.push(chunk({}, 'tool_calls'));
      } else {
        for (let i = 0; i < options.answerChunks; i++) pieces.push(chunk({ content: `piece ${i}. ` }));
        pieces.push(chunk({}, 'stop'));
      }
      let at = 0;
      const next = (): void => {
        if (res.destroyed) return;
        if (at === pieces.length) {
          res.end('data: [DONE]\n\n');
          request.finished = true;
          return;
        }
        res.write(pieces[at++]);
        request.writtenAt.push(performance.timeOrigin + performance.now());
        progress.set(request, at);
        for (const wake of waiters.splice(0)) wake();
        setTimeout(next, request.last === 'user' ? 0 : options.delayMs);
      };
      next();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return {
    url,
    requests,
    streaming: (what, chunks) => new Promise((resolve) => {
      const check = (): void => {
        if (requests.some((r) => what(r) && (progress.get(r) ?? 0) >= chunks)) resolve();
        else waiters.push(check);
      };
      check();
    }),
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

/** What the tool does: counts its starts and its ends in files of the workspace, sleeping between. */
export const toolScript = (sleepSeconds: number): string => `echo started >> starts.txt\nsleep ${sleepSeconds}\necho ended >> ends.txt\necho tool-output\n`;

/** A workspace whose agent `builder` holds `shell`, may run `sh tool.sh` unasked, and talks to `modelUrl`. */
export async function setupEngineWorkspace(dir: string, modelUrl: string, engine: LocalEngine, toolSleepSeconds = 0, toolDecision: 'allow' | 'ask' = 'allow'): Promise<Record<string, string>> {
  await initWorkspace({ appDir: APP_DIR, workspaceRoot: dir, userDir: testUserDir(dir) });
  await createParticipantStore(layoutFor(dir)).save(agentSchema().parse({ id: 'builder', kind: 'agent', name: 'builder', systemPrompt: 'You build.', tools: ['shell'] }));
  await writeFile(join(dir, '.legion', 'rules.yaml'), `version: 1\nrules:\n  - id: tool-script\n    decision: ${toolDecision}\n    tool: shell\n    match: { command: "sh tool.sh" }\n`);
  await writeFile(join(dir, '.legion', 'config.yaml'), [
    'provider: openai',
    `providers: { openai: { baseUrl: "${modelUrl}", model: fake }, maxRetries: 0 }`,
    'sandbox: off',
    'checkpoints: { enabled: false }',
    `engine: { kind: restate, ingress: "${engine.ingress}", admin: "${engine.admin}", identityKey: "${engine.identityKey}" }`,
    '',
  ].join('\n'));
  await writeFile(join(dir, 'tool.sh'), toolScript(toolSleepSeconds));
  return { HOME: dir, PATH: process.env.PATH ?? '/usr/bin:/bin', OPENAI_API_KEY: 'test-key' };
}

/** What most engine tests start from: a fake model, a real engine, the builder's workspace, a run, and the user's session with the builder. */
export interface EngineScene {
  readonly model: FakeModel;
  readonly engine: LocalEngine;
  readonly env: Record<string, string>;
  readonly run: { readonly id: string };
  readonly sessionId: string;
}

export async function startEngineScene(dir: string, modelOptions: { answerChunks: number; delayMs: number }): Promise<EngineScene> {
  const model = await startFakeModel(modelOptions);
  const engine = await startEngine(dir);
  const env = await setupEngineWorkspace(dir, model.url, engine);
  const run = await createRunStore(layoutFor(dir), () => new Date(), randomIds).create(new Date());
  return { model, engine, env, run, sessionId: sessionIdOf({ initiatorId: 'user', responderId: 'builder', name: 'default' }) };
}

/** Finished model calls sent twice (the same conversation answered in full twice): a repeated paid call. */
export function repeatedFinished(model: FakeModel): number {
  const finished = model.requests.filter((r) => r.finished).map((r) => r.history);
  return finished.length - new Set(finished).size;
}

/** A temp workspace on a real engine with a fake model and a run, for tests that add their own agents and workers. */
export interface EngineRunScene {
  readonly dir: string;
  readonly env: Record<string, string>;
  readonly engine: LocalEngine;
  readonly model: FakeModel;
  readonly runId: string;
  /** A free port for the test's first worker. */
  readonly port: number;
}

/**
 * Run `body` in an `EngineRunScene`: `prepare` adds agents, rules and scripts to the workspace
 * before the run is made. The engine and the model are stopped afterwards, even on failure.
 */
export async function withEngineRun(
  options: { model: { answerChunks: number; delayMs: number; script?: ModelScript }; toolSleepSeconds: number; prepare?: (dir: string) => Promise<void> },
  body: (scene: EngineRunScene) => Promise<void>,
): Promise<void> {
  await withTempDir(async (dir) => {
    const model = await startFakeModel(options.model);
    const engine = await startEngine(dir);
    try {
      const env = await setupEngineWorkspace(dir, model.url, engine, options.toolSleepSeconds);
      await options.prepare?.(dir);
      const run = await createRunStore(layoutFor(dir), () => new Date(), randomIds).create(new Date());
      await body({ dir, env, engine, model, runId: run.id, port: await freePort() });
    } finally {
      try { process.kill(-engine.pid, 'SIGKILL'); } catch { /* gone */ }
      await model.close();
    }
  });
}

/** `settings`: more lines of the engine's config (startLocalEngine), for benches trying a knob. */
export async function startEngine(dir: string, settings: readonly string[] = []): Promise<LocalEngine> {
  await mkdir(join(dir, 'engine-data'), { recursive: true });
  return startLocalEngine({ dataDir: join(dir, 'engine-data'), logFile: join(dir, 'engine.log'), env: process.env, settings });
}

export interface WorkerProcess {
  readonly child: ChildProcess;
  readonly url: string;
  readonly log: string[];
}

/** `legion worker --listen 127.0.0.1:<port>` (through tsx), resolved once it printed its URL (registered). */
/** `root`: the checkout whose bin/legion.ts runs (another one for an A/B bench; default this one). */
/**
 * How a test or bench starts the CLI: a checkout's sources through tsx (tests: no build needed),
 * or its built bundle, `dist/legion.js` (benches: the path users run; `npm run bench` builds it).
 */
export interface CliEntry {
  readonly kind: 'sources' | 'bundle';
  readonly root: string;
}
export const SOURCES: CliEntry = { kind: 'sources', root: REPO_ROOT };
export const BUILT: CliEntry = { kind: 'bundle', root: REPO_ROOT };

/** Node's arguments that run `entry`'s CLI. */
function cliArgs(entry: CliEntry): string[] {
  return entry.kind === 'bundle' ? [join(entry.root, 'dist', 'legion.js')] : ['--import', 'tsx', join(entry.root, 'bin', 'legion.ts')];
}

export async function startWorker(dir: string, env: Record<string, string>, port: number, extra: string[] = [], entry: CliEntry = SOURCES): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [...cliArgs(entry), '--cwd', dir, 'worker', '--listen', `127.0.0.1:${port}`, ...extra], {
    cwd: entry.root, env, stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log: string[] = [];
  child.stderr!.on('data', (d: Buffer) => log.push(d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(out.trim());
    });
    child.once('exit', (code) => reject(new Error(`legion worker exited (${code}): ${log.join('')}`)));
  });
  return { child, url, log };
}

export function killHard(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** POST a turn to the ingress and wait for its outcome (at most `deadlineMs` when given: then it rejects, saying so). */
export async function sendTurn(ingress: string, sessionId: string, input: { runId: string; responderId: string; name: string; text: string }, deadlineMs?: number): Promise<unknown> {
  // The engine's own client: the local engine's ingress is a unix socket (http+unix://).
  const { status, text } = await requestText(`${ingress}/LegionSession/${sessionId}/turn`, { method: 'POST', body: JSON.stringify(input) }, deadlineMs)
    .catch((error: unknown) => {
      throw (error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError' ? new Error(`the turn "${input.text}" had no outcome after ${deadlineMs} ms`) : error;
    });
  if (status < 200 || status >= 300) throw new Error(`ingress: HTTP ${status} ${text}`);
  return JSON.parse(text);
}

/** The built-from-source CLI (`node --import tsx bin/legion.ts --cwd dir …`), as a child process. */
export function spawnLegion(dir: string, env: Record<string, string>, args: string[], entry: CliEntry = SOURCES): ChildProcess {
  return spawn(process.execPath, [...cliArgs(entry), '--cwd', dir, ...args], { cwd: entry.root, env, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Run the CLI to its end: exit code and output. */
export function runLegion(dir: string, env: Record<string, string>, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawnLegion(dir, env, args);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Lines of the `builder` session's file in the workspace's only run (the projection the workers write). */
export function projectionLines(dir: string, sessionId = 'session-user__builder__default'): string[] {
  const runsDir = join(dir, '.legion', 'runs');
  for (const run of existsSync(runsDir) ? readdirSync(runsDir) : []) {
    const file = join(runsDir, run, 'sessions', `${sessionId}.jsonl`);
    if (!existsSync(file)) continue;
    // Polled while the worker appends: whole lines only (an append can be caught half copied).
    const text = readFileSync(file, 'utf8');
    return text.slice(0, text.lastIndexOf('\n') + 1).split('\n').filter((l) => l.trim() !== '');
  }
  return [];
}

/**
 * What most engine tests run (docs/engine.md): the fake model, a real restate-server, the
 * workspace, one `legion worker` at `port` and `legion serve` (the hub), started in that order.
 * `worker` and `serve` are replaced by `restartWorker`/`restartServe` (after a test killed them);
 * `close` stops whatever runs (the model, the engine, the processes) and never throws.
 */
export interface EngineStack {
  readonly model: FakeModel;
  readonly engine: LocalEngine;
  readonly env: Record<string, string>;
  readonly port: number;
  /** The current worker and `legion serve`. */
  readonly worker: WorkerProcess;
  readonly serve: ChildProcess;
  /** What the current `legion serve` wrote to stderr. */
  serveLog(): string;
  /** A new worker at the same port (the old one killed first). */
  restartWorker(): Promise<void>;
  /** A new `legion serve` (the old one killed first), resolved once it serves. */
  restartServe(): Promise<void>;
  /** A remote core attached to `legion serve`'s socket, as a front end attaches. */
  attach(client?: string): Promise<RemoteCore>;
  close(): Promise<void>;
}

export interface EngineStackOptions {
  readonly answerChunks: number;
  readonly delayMs: number;
  readonly toolSleepSeconds?: number;
  readonly toolDecision?: 'allow' | 'ask';
  /** Extra environment of the worker (e.g. LEGION_ENGINE_TIMING). */
  readonly workerEnv?: Record<string, string>;
  /** Extra environment of `legion serve` (e.g. NODE_OPTIONS for a profile). */
  readonly serveEnv?: Record<string, string>;
  /** How `legion serve` and the worker start (default: the sources through tsx). */
  readonly entry?: CliEntry;
}

export async function startEngineStack(dir: string, options: EngineStackOptions): Promise<EngineStack> {
  const model = await startFakeModel({ answerChunks: options.answerChunks, delayMs: options.delayMs });
  let engine: LocalEngine | undefined;
  const attached: RemoteCore[] = [];
  let worker: WorkerProcess | undefined;
  let serve: ChildProcess | undefined;
  let log = '';
  const close = async (): Promise<void> => {
    for (const remote of attached.splice(0)) await remote.shutdown('test over').catch(() => undefined);
    if (serve) await killHard(serve);
    if (worker) await killHard(worker.child);
    if (engine) try { process.kill(-engine.pid, 'SIGKILL'); } catch { /* gone */ }
    await model.close();
  };
  const startServe = async (env: Record<string, string>): Promise<void> => {
    log = '';
    serve = spawnLegion(dir, env, ['serve'], options.entry);
    serve.stderr!.on('data', (d: Buffer) => { log += d.toString(); });
    const started = serve;
    await until(() => log.includes('serving run') || started.exitCode !== null, 'legion serve listening', 60_000);
    if (started.exitCode !== null) throw new Error(`legion serve exited (${started.exitCode}): ${log}`);
  };
  try {
    engine = await startEngine(dir);
    const env = await setupEngineWorkspace(dir, model.url, engine, options.toolSleepSeconds ?? 0, options.toolDecision ?? 'allow');
    const port = await freePort();
    const workerEnv = { ...env, ...options.workerEnv };
    worker = await startWorker(dir, workerEnv, port, [], options.entry);
    const serveEnv = { ...env, ...options.serveEnv };
    await startServe(serveEnv);
    const stack: EngineStack = {
      model, engine, env, port,
      get worker() { return worker!; },
      get serve() { return serve!; },
      serveLog: () => log,
      async restartWorker() {
        await killHard(worker!.child);
        worker = await startWorker(dir, workerEnv, port, [], options.entry);
      },
      async restartServe() {
        await killHard(serve!);
        await startServe(serveEnv);
      },
      async attach(client = 'test') {
        const info = JSON.parse(readFileSync(join(dir, '.legion', 'serve.json'), 'utf8')) as { socket: string };
        const remote = (await attachRemote({ socket: info.socket, client })).core;
        attached.push(remote);
        return remote;
      },
      close,
    };
    return stack;
  } catch (error) {
    await close();
    throw error;
  }
}

/** A TCP balancer in front of workers (docs/engine.md#several-machines): each connection to the next backend that accepts it. */
export async function startBalancer(ports: number[]): Promise<{ port: number; server: TcpServer; used: number[] }> {
  let next = 0;
  const used: number[] = [];
  const server = createTcpServer((client: Socket) => {
    const tryFrom = (attempt: number): void => {
      if (attempt >= ports.length) return void client.destroy();
      const port = ports[(next + attempt) % ports.length]!;
      const upstream = createConnection({ port, host: '127.0.0.1' });
      upstream.once('connect', () => {
        next = (next + attempt + 1) % ports.length;
        used.push(port);
        client.pipe(upstream).pipe(client);
      });
      upstream.once('error', () => {
        if (!upstream.readyState || upstream.connecting) tryFrom(attempt + 1);
        else client.destroy();
      });
      client.once('error', () => upstream.destroy());
      client.once('close', () => upstream.destroy());
      upstream.once('close', () => client.destroy());
    };
    tryFrom(0);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as { port: number }).port, server, used };
}
