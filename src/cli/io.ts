import { withoutTerminalControls } from '../terminal-text';

/** Where a command writes; injected so tests capture it. */
export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly isTTY: boolean;
  /**
   * Standard input when it is piped or redirected (a file, a pipe, /dev/null); absent when it
   * is a terminal, which is never read.
   */
  readonly stdin?: AsyncIterable<Uint8Array | string>;
}

/**
 * The real process streams. Everything a command prints passes withoutTerminalControls here, the
 * one gate of the CLI's output (Legion itself writes no escape sequences there): what it prints
 * of workspace files, a model or a tool (an MCP server's name from `.mcp.json`, a hook's command,
 * `legion serve`'s log of warnings) cannot retitle the terminal or write its clipboard (OSC 52).
 * A reader that goes away (`legion show | head`) is not an error:
 * output stops and the process exits 0, without a stack trace.
 */
export function processIo(): CliIo {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw error;
    });
  }
  return {
    stdout: (t) => void process.stdout.write(withoutTerminalControls(t)),
    stderr: (t) => void process.stderr.write(withoutTerminalControls(t)),
    env: process.env,
    cwd: process.cwd(),
    isTTY: Boolean(process.stdout.isTTY && process.stdin.isTTY),
    ...(process.stdin.isTTY ? {} : { stdin: { [Symbol.asyncIterator]: () => process.stdin[Symbol.asyncIterator]() } }),
  };
}
