import { startAppHarness, type AppHarness } from './app-harness';
import { startWeb, type WebHandle } from '../../src/remote/web/server';
import { newWebToken } from '../../src/remote/web/token';

/** Strings a hostile model might print; the page must show them as text. */
export const HOSTILE_SCRIPT = '<script>window.__pwned = 1</script>';
export const HOSTILE_IMG = '"><img src=x onerror="window.__pwned = 2">';

/** A file name no phone screen is wide enough for, unbroken. */
export const LONG_NAME = `f-${'x'.repeat(150)}.txt`;

/**
 * The app as a user's start composes it (`composeApp` through startAppHarness: config, rules
 * from `.legion/rules.yaml`, audit on disk; the faux provider) where `worker` writes files only
 * after an approval (`file_write` asks) and answers with hostile text ("hostile"), or makes
hostile tool calls ("nasty": a file name and a tool name that are markup), or asks the user
("ask"), plus the web server on
 * port 0 over the composed core.
 */
export const WEB_SCRIPT = `
replies:
${['a', 'b', 'c', 'd', 'e', 'g'].map((f) => `  - { agent: worker, on: message, when: "^write ${f}", toolCalls: [{ name: file_write, input: { path: ${f}.txt, content: "written by worker" } }] }\n`).join('')}${'  - { agent: worker, on: tool-error, text: "not written: {{lastText}}" }\n  - { agent: worker, on: tool-result, text: "**done**: {{lastText}}" }\n'.repeat(8)}  - { agent: worker, on: message, when: "^write f", toolCalls: [{ name: file_write, input: { path: ${LONG_NAME}, content: "phone" } }] }
  - { agent: worker, on: message, when: "^ask", toolCalls: [{ name: communicator, input: { targetId: user, message: "Which color?" } }] }
  - agent: worker
    on: message
    when: "^nasty"
    toolCalls: ${JSON.stringify([{ name: 'file_write', input: { path: `${HOSTILE_IMG}.txt`, content: HOSTILE_SCRIPT } }, { name: HOSTILE_SCRIPT, input: { x: HOSTILE_IMG } }])}
  - agent: worker
    on: message
    when: "^hostile"
    text: '${HOSTILE_SCRIPT} and ${HOSTILE_IMG.replace(/'/g, "''")} and \`code <b>\`'
`;

export interface WebFixture {
  readonly h: AppHarness;
  readonly web: WebHandle;
  readonly token: string;
  readonly base: string;
  close(): Promise<void>;
}

export async function startWebFixture(dir: string, options: { maxClientBufferBytes?: number; maxBodyBytes?: number; maxClients?: number; maxUnauthenticated?: number; unauthenticatedTimeoutMs?: number } = {}): Promise<WebFixture> {
  const h = await startAppHarness({ dir, agents: [{ id: 'worker', tools: ['file_write', 'communicator'] }], script: WEB_SCRIPT, rules: { file_write: 'ask' } });
  const token = newWebToken();
  const web = await startWeb({ core: h.core, token, port: 0, ...options });
  return {
    h, web, token, base: `http://127.0.0.1:${web.port}`,
    close: async () => {
      await web.close();
      await h.close();
    },
  };
}
