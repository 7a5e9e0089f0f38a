import { main, type MainOptions } from '../../src/cli/main';
import type { CliIo } from '../../src/cli/io';

/** A CliIo that records everything written, for driving `main()` in tests. */
export interface CapturedIo {
  readonly io: CliIo;
  stdout(): string;
  stderr(): string;
}

export interface CaptureOptions {
  readonly cwd: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly isTTY?: boolean;
}

export function captureIo(options: CaptureOptions): CapturedIo {
  let out = '';
  let err = '';
  return {
    io: {
      stdout: (t) => void (out += t),
      stderr: (t) => void (err += t),
      env: options.env ?? {},
      cwd: options.cwd,
      isTTY: options.isTTY ?? false,
    },
    stdout: () => out,
    stderr: () => err,
  };
}

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Run the CLI in-process with a captured io. */
export async function runCli(argv: readonly string[], options: CaptureOptions & Omit<Partial<MainOptions>, 'io'>): Promise<CliRun> {
  const captured = captureIo(options);
  const code = await main(argv, { io: captured.io, appDir: options.appDir, startTui: options.startTui });
  return { code, stdout: captured.stdout(), stderr: captured.stderr() };
}
