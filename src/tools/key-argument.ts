import type { Tool } from './types';

/** The key argument of a call by tool name (collective/tools/shipped.ts `keyArgumentOf` for front ends). */
export type KeyArgumentOf = (toolName: string, input: unknown) => string;

/**
 * The argument that says what a call is about (the path, the command, the target…), as every
 * list shows it — transcripts, lanes, the approval queue, the web page, notifications, the
 * requests an agent reads: the tool's own `keyArgument` (tools/types.ts), else, for a tool not
 * known here or one without, its first text field; on one line, `''` when there is none.
 */
export function keyArgumentText(tool: Pick<Tool, 'keyArgument'> | undefined, input: unknown): string {
  let arg: string | undefined;
  if (tool) {
    try {
      arg = tool.keyArgument(input);
    } catch {
      arg = undefined; // input that does not fit the schema (a call the check refused)
    }
  }
  if (arg === undefined && typeof input === 'object' && input !== null) {
    arg = Object.values(input as Record<string, unknown>).find((v): v is string => typeof v === 'string');
  }
  return arg === undefined ? '' : arg.replace(/\s+/g, ' ').trim();
}
