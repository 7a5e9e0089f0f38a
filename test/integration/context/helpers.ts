import { readFileSync } from 'node:fs';
import type { Provider, ProviderRequest } from '../../../src/providers/types';
import { createFauxProvider, parseFauxScript } from '../../../src/providers/faux';
import type { Layout } from '../../../src/storage/layout';

/** The faux provider from a script, recording every request it is sent. */
export function recordingFaux(script: string): Provider & { requests: ProviderRequest[] } {
  const parsed = parseFauxScript(script, 'test-script.yaml');
  if (!parsed.ok) throw new Error(parsed.error);
  const faux = createFauxProvider({ script: parsed.script });
  const requests: ProviderRequest[] = [];
  return {
    id: 'faux',
    requests,
    stream(request, signal) {
      requests.push(request);
      return faux.stream(request, signal);
    },
  };
}

/** Tokens of a request as the faux provider counts them (4 characters a token). */
export function fauxTokens(request: ProviderRequest): number {
  return Math.ceil((request.system.length + JSON.stringify(request.messages).length) / 4);
}

/** Every line of a session file, parsed (messages and context records). */
export function sessionLines(layout: Layout, runId: string, sessionId: string): Record<string, unknown>[] {
  return readFileSync(layout.sessionFile(runId, sessionId), 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
}
