/**
 * Ctrl+C of a `legion run` attached to a server (docs/serve.md#attaching): the first press calls
 * `interrupt` (the turn or the workflow on the server stops), a second one calls `detach` and
 * exits with `code` (130) at once. Returns the function that removes the handler.
 */
export function onAttachedSigint(
  stderr: (text: string) => void,
  handlers: { interrupt(): void; detach(): void; readonly code: number },
  proc: Pick<NodeJS.Process, 'on' | 'off' | 'exit'> = process,
): () => void {
  let presses = 0;
  const onSigint = (): void => {
    presses += 1;
    if (presses > 1) {
      proc.off('SIGINT', onSigint);
      handlers.detach();
      proc.exit(handlers.code);
      return;
    }
    stderr('legion: interrupting… (Ctrl+C again to detach)\n');
    handlers.interrupt();
  };
  proc.on('SIGINT', onSigint);
  return () => { proc.off('SIGINT', onSigint); };
}
