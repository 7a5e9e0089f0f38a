import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fixedTokensOf, tokensOfRange } from '../../../src/context/estimate';
import type { Message } from '../../../src/model/message';

/**
 * The estimate against the prompt tokens the vendors reported in the replay fixtures
 * (test/fixtures/vendor), for the requests those recordings answered (docs/context.md,
 * "Estimate"). The requests are rebuilt from the fixtures' sources (README there).
 */
const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }], at: '' });
const reported = (file: string, pattern: RegExp): number => Number(pattern.exec(readFileSync(`test/fixtures/vendor/${file}`, 'utf8'))![1]);

const cases = [
  {
    // openai-python test_parse_nothing: one user message, no tools (gpt-4o-2024-08-06).
    name: 'openai/text-stream.sse',
    system: '', tools: [] as unknown[], messages: [user("What's the weather like in SF?")],
    actual: reported('openai/text-stream.sse', /"prompt_tokens":(\d+)/),
  },
  {
    // Anthropic streaming docs, "Streaming request with tool use": the get_weather tool and one question.
    name: 'anthropic/tool-use-stream.sse',
    system: '',
    tools: [{
      name: 'get_weather', description: 'Get the current weather in a given location',
      inputSchema: { type: 'object', properties: { location: { type: 'string', description: 'The city and state, e.g. San Francisco, CA' } }, required: ['location'] },
    }],
    messages: [user('What is the weather like in San Francisco?')],
    actual: reported('anthropic/tool-use-stream.sse', /"input_tokens":(\d+)/),
  },
];

test('estimate vs reported prompt tokens of the vendor fixtures (figures in docs/context.md)', (t) => {
  for (const c of cases) {
    const estimate = fixedTokensOf(c.system, c.tools) + tokensOfRange(c.messages, 0, c.messages.length);
    const error = (estimate - c.actual) / c.actual;
    t.diagnostic(`${c.name}: reported ${c.actual}, estimated ${estimate} (${(error * 100).toFixed(0)}%)`);
    // Small requests are dominated by fixed framing; the bound is loose on purpose and documented.
    assert.ok(Math.abs(error) <= 0.6, `${c.name}: ${estimate} vs ${c.actual}`);
  }
});
