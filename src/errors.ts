/** An error whose message is meant for the user as is: one line, no stack. */
export class LegionError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
    this.name = 'LegionError';
  }
}

/** The message of any thrown value. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
