import type { LegionConfig } from '../config/schema';
import type { LegionCore } from '../runtime/core-api';

/**
 * Something that runs inside `legion serve` next to the socket (a web view, remote approvals,
 * notifications…): it gets the server's core when the server starts and hands back how to
 * stop it. Addons are listed in src/cli/serve-addons.ts; their flags join `legion serve`'s.
 */
export interface ServeAddonContext {
  readonly core: LegionCore;
  readonly config: LegionConfig;
  readonly workspaceRoot: string;
  readonly legionDir: string;
  /** Whether `.legion/` is trusted (docs/workspace-trust.md): an addon reads nothing of an untrusted one that confers access (the web token). */
  readonly workspaceTrusted: boolean;
  /** `legion serve`'s flags (an addon's own included): name → value, true for boolean flags. */
  readonly flags: ReadonlyMap<string, string | true>;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** A line for the server's log (stderr, or `.legion/logs/serve.log` when detached). */
  log(line: string): void;
}

export interface ServeAddon {
  readonly name: string;
  /** Flags it adds to `legion serve` (name → 'value' | 'boolean'). */
  readonly flags?: Readonly<Record<string, 'value' | 'boolean'>>;
  /**
   * Start, or return null when its flags/config say it is off. A thrown error stops the server
   * from starting (one line to the user). The returned function is awaited at `legion stop`,
   * before the core shuts down.
   */
  start(context: ServeAddonContext): Promise<(() => Promise<void>) | null>;
}
