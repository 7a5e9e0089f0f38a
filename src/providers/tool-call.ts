import type { ProviderEvent } from './types';

/**
 * A completed tool call from the JSON text a model streamed. Empty text is `{}` (a tool
 * without arguments). Text that is not JSON, or JSON that is not an object, keeps the raw
 * text as `input` and says why in `inputError` (the runtime answers with an error result the
 * model can correct).
 */
export function toolCallEvent(id: string, name: string, json: string): ProviderEvent {
  if (json.trim() === '') return { type: 'tool-call', id, name, input: {} };
  let input: unknown;
  try {
    input = JSON.parse(json);
  } catch (error) {
    const why = (error as Error).message.split('\n')[0];
    return { type: 'tool-call', id, name, input: json, inputError: `the arguments of ${name} are not valid JSON (${why}); send one JSON object` };
  }
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    return { type: 'tool-call', id, name, input: json, inputError: `the arguments of ${name} must be a JSON object, got ${Array.isArray(input) ? 'an array' : input === null ? 'null' : typeof input}` };
  }
  return { type: 'tool-call', id, name, input };
}
