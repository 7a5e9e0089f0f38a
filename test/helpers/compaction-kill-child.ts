/**
 * Child process for test/integration/context/kill-compaction.test.ts: a core on the workspace
 * given (a 4,000-token window), whose reader reads a big file turn after turn until its
 * session is compacted. The summary request never ends (the script's compaction reply waits
 * `delayMs` before its first word), so the parent can SIGKILL the child in the middle of a
 * compaction. Prints `turn <n> <sessionId> <messages>` after each turn and
 * `summarizing <sessionId> <messages>` when the summary request starts.
 *
 *   node --import tsx compaction-kill-child.ts <workspace>
 */
import { startAppHarness } from './app-harness';
import { recordingFaux } from '../integration/context/helpers';

export const KILL_CONFIG = { context: { defaultWindow: 4000, compactAt: 0.6, keepRecent: 0.3, evictToolResultsOver: 1000 } };
export const READER = { id: 'reader', tools: ['file_read', 'recall'] };
/** `summaryDelayMs`: before the summary's first word (the child: forever; the parent's reload: none). */
export const killScript = (summaryDelayMs: number): string => `
replies:
  - { agent: reader, purpose: compaction, repeat: true, delayMs: ${summaryDelayMs}, text: "SUMMARY: big.txt was read many times." }
  - { agent: reader, on: message, repeat: true, toolCalls: [{ name: file_read, input: { path: big.txt } }] }
  - { agent: reader, on: tool-result, repeat: true, text: "I read it." }
`;

async function main(dir: string): Promise<void> {
  const faux = recordingFaux(killScript(600_000));
  let current = '';
  let count = (): number => 0;
  const provider = {
    ...faux,
    stream: (request: Parameters<typeof faux.stream>[0], signal: AbortSignal) => {
      if (request.meta?.purpose === 'compaction') process.stdout.write(`summarizing ${current} ${count()}\n`);
      return faux.stream(request, signal);
    },
  };
  const h = await startAppHarness({ dir, provider, config: KILL_CONFIG, agents: [READER] });
  for (let i = 0; ; i++) {
    const sent = h.core.send('reader', `turn ${i}: read big.txt`);
    if (!sent.ok) throw new Error(sent.error);
    current = sent.sessionId;
    count = () => h.core.history(sent.sessionId).length;
    await h.core.idle(sent.sessionId);
    process.stdout.write(`turn ${i} ${sent.sessionId} ${count()}\n`);
  }
}

if (process.argv[2]) {
  main(process.argv[2]).catch((error: unknown) => {
    process.stderr.write(`compaction-kill-child: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
}
