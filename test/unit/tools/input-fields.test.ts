import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { inputFieldsOf, toolDefinition } from '../../../src/tools/registry';
import { SHIPPED_TOOLS } from '../../../src/collective/tools/shipped';
import type { Tool } from '../../../src/tools/types';

/** The fields as providers see them: the properties of the tool's JSON Schema (what inputFieldsOf must equal). */
const jsonSchemaFields = (tool: Tool): string[] => Object.keys((toolDefinition(tool).inputSchema.properties ?? {}) as Record<string, unknown>);

const toolWith = (schema: z.ZodType, inputJsonSchema?: Record<string, unknown>): Tool => ({
  name: 't', description: 'd', schema, keyArgument: () => undefined, ...(inputJsonSchema ? { inputJsonSchema } : {}),
  execute: async () => ({ ok: true, output: '' }) as never,
});

test('inputFieldsOf: every shipped tool (rule files are checked against these) lists the properties of its JSON Schema, in order', () => {
  assert.ok(SHIPPED_TOOLS.length > 10);
  for (const tool of SHIPPED_TOOLS) assert.deepEqual([...inputFieldsOf(tool)], jsonSchemaFields(tool), tool.name);
});

test('inputFieldsOf: objects with optional, defaulted, transformed and refined fields; other schemas and MCP JSON Schemas', () => {
  const cases: Tool[] = [
    toolWith(z.strictObject({ a: z.string(), b: z.number().optional(), c: z.boolean().default(false), d: z.string().transform((s) => s.length) })),
    toolWith(z.object({ path: z.string() }).refine((v) => v.path !== '')),
    toolWith(z.object({ x: z.string() }).transform((v) => v.x)),
    toolWith(z.union([z.object({ a: z.string() }), z.object({ b: z.string() })])),
    toolWith(z.object({}).passthrough(), { type: 'object', properties: { q: { type: 'string' }, r: { type: 'number' } } }),
  ];
  const expected = [['a', 'b', 'c', 'd'], ['path'], ['x'], [], ['q', 'r']];
  cases.forEach((tool, i) => {
    assert.deepEqual([...inputFieldsOf(tool)], expected[i], `case ${i}`);
    assert.deepEqual([...inputFieldsOf(tool)], jsonSchemaFields(tool), `case ${i} against its JSON Schema`);
  });
});
