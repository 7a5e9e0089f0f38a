import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { runCli, type CliRun } from './cli';
import { withTempDir } from './tmp';
import { APP_DIR } from './app-harness';
import { sse, startVendorServer, type VendorServer, type ScriptedResponse } from './vendor-server';
import { anthropicStream } from './vendor-streams';

/** A workspace and a home of their own, and a fake Anthropic server (test/integration/conventions). */
export interface ConventionsFixture {
  readonly root: string;
  readonly home: string;
  readonly server: VendorServer;
  /** Write a file under the workspace (folders made). */
  write(path: string, text: string): Promise<void>;
  /** Write a file under the home folder. */
  writeHome(path: string, text: string): Promise<void>;
  run(argv: readonly string[]): Promise<CliRun>;
}

export async function withConventions<T>(fn: (f: ConventionsFixture) => Promise<T>, route?: (body: any) => ScriptedResponse | undefined): Promise<T> {
  const server = await startVendorServer({ strictHistory: true, ...(route ? { route } : {}) });
  try {
    return await withTempDir(async (dir) => {
      const root = join(dir, 'work');
      const home = join(dir, 'home');
      await mkdir(root, { recursive: true });
      await mkdir(home, { recursive: true });
      const put = async (file: string, text: string): Promise<void> => {
        await mkdir(dirname(file), { recursive: true });
        await writeFile(file, text);
      };
      const env = { HOME: home, PATH: process.env.PATH, ANTHROPIC_API_KEY: 'sk-ant-test-key-0123456789', ANTHROPIC_BASE_URL: server.anthropicURL };
      return await fn({
        root, home, server,
        write: (path, text) => put(join(root, path), text),
        writeHome: (path, text) => put(join(home, path), text),
        run: (argv) => runCli(argv, { cwd: root, env, appDir: APP_DIR }),
      });
    });
  } finally {
    await server.close();
  }
}

/** A model answer with text only. */
export const say = (text: string): ScriptedResponse => sse(anthropicStream({ text: [text], stopReason: 'end_turn' }));
/** A model answer calling one tool. */
export const call = (name: string, input: unknown, id = `toolu_${name}`): ScriptedResponse =>
  sse(anthropicStream({ tool: { id, name, json: [JSON.stringify(input)] }, stopReason: 'tool_use' }));

/** The system prompt of a recorded Anthropic request, as one string. */
export function systemOf(body: any): string {
  const system = body?.system;
  if (typeof system === 'string') return system;
  if (Array.isArray(system)) return system.map((b: any) => b.text ?? '').join('\n');
  return '';
}

/** Every text the request's messages carry (text blocks and tool results), joined. */
export function messagesText(body: any): string {
  const out: string[] = [];
  for (const m of body?.messages ?? []) {
    if (typeof m.content === 'string') out.push(m.content);
    else for (const b of m.content ?? []) {
      if (b.type === 'text') out.push(b.text);
      if (b.type === 'tool_result') out.push(typeof b.content === 'string' ? b.content : (b.content ?? []).map((c: any) => c.text ?? '').join(''));
    }
  }
  return out.join('\n');
}

/** The names of the tools a request offered. */
export const toolNames = (body: any): string[] => (body?.tools ?? []).map((t: any) => t.name);
