/** Placeholder until the TUI shell lands: the entry point the CLI calls for `legion start`. */
export async function startTui(_options: unknown): Promise<number> {
  process.stderr.write('legion: the TUI is not built yet\n');
  return 1;
}
