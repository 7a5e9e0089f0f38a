import { isDeepStrictEqual } from 'node:util';
import type { ToolResult } from '../tools/types';

/** The parts of an MCP `CallToolResult` Legion reads (validated by the SDK before it gets here). */
export interface McpCallResult {
  readonly content?: readonly unknown[];
  readonly structuredContent?: unknown;
  readonly isError?: boolean;
  readonly toolResult?: unknown;
}

/**
 * An MCP tool result as a Legion tool result (docs/mcp.md, "Results"): text blocks as text;
 * `structuredContent` as JSON text (unless a text block already carries the same JSON);
 * images, audio and binary resources as a one-line placeholder with type and size (the
 * providers' tool results carry text only); embedded text resources with their URI;
 * `isError` as an error result. The executor caps the output like any tool's.
 */
export function convertCallResult(result: McpCallResult): ToolResult {
  const parts: string[] = [];
  const texts: string[] = [];
  for (const block of result.content ?? []) {
    const text = blockText(block);
    if (text === null) continue;
    parts.push(text);
    if (isObject(block) && block.type === 'text') texts.push(text);
  }
  if (result.content === undefined && result.toolResult !== undefined) parts.push(jsonText(result.toolResult));
  if (result.structuredContent !== undefined && !texts.some((t) => sameJson(t, result.structuredContent))) {
    parts.push(jsonText(result.structuredContent));
  }
  const content = parts.length ? parts.join('\n') : result.isError ? 'the tool reported an error without details' : '(no output)';
  return result.isError ? { content, isError: true } : { content };
}

function blockText(block: unknown): string | null {
  if (!isObject(block)) return null;
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? block.text : '';
    case 'image':
    case 'audio':
      return placeholder(String(block.type), block.mimeType, block.data);
    case 'resource_link':
      return `[resource link: ${typeof block.name === 'string' ? `${block.name} ` : ''}<${String(block.uri)}>]`;
    case 'resource': {
      const resource = isObject(block.resource) ? block.resource : {};
      if (typeof resource.text === 'string') return `[resource <${String(resource.uri)}>]\n${resource.text}`;
      return placeholder(`resource <${String(resource.uri)}>`, resource.mimeType, resource.blob);
    }
    default:
      return `[${String(block.type)} content]`;
  }
}

/** "[image: image/png, 1.2 kB]": base64 data's decoded size. */
function placeholder(kind: string, mimeType: unknown, data: unknown): string {
  const size = typeof data === 'string' ? Math.floor((data.replace(/=+$/, '').length * 3) / 4) : 0;
  return `[${kind}: ${typeof mimeType === 'string' ? mimeType : 'binary'}, ${formatBytes(size)} — not shown to the model]`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} kB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

function sameJson(text: string, value: unknown): boolean {
  try {
    return isDeepStrictEqual(JSON.parse(text), value);
  } catch {
    return false;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
