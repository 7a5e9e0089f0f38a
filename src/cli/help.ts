import type { Command } from './command';

const GLOBAL_FLAGS = `global flags:
  --cwd <dir>        workspace folder (default: the current folder)
  --provider <p>     anthropic | openai | gemini | faux (default: auto)
  --model <m>        model for agents whose model is "default"
  --plain            no box drawing or spinners (also LEGION_SCREEN_READER=1)
  --help, --version
`;

/** The `--help` text: every command, or one command's usage. */
export function helpText(commands: readonly Command[], only?: Command): string {
  if (only) return `usage: ${only.usage}\n\n${only.summary}\n\n${GLOBAL_FLAGS}`;
  const lines = commands.map((c) => `  ${c.usage}\n      ${c.summary}`);
  return `Legion: a terminal for a persistent multi-agent collective\n\nusage:\n${lines.join('\n')}\n\n${GLOBAL_FLAGS}\nenvironment: ANTHROPIC_API_KEY ANTHROPIC_BASE_URL OPENAI_API_KEY OPENAI_BASE_URL GEMINI_API_KEY GEMINI_BASE_URL\n             LEGION_PROVIDER LEGION_MODEL LEGION_FAUX_SCRIPT LEGION_DEBUG=1 NO_COLOR\n`;
}
