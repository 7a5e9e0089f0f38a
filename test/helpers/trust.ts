import { homedir } from 'node:os';
import { trustPlace, writeWorkspaceTrust } from '../../src/storage/workspace-trust';
import { userConfigDir } from '../../src/storage/private-mode';

/**
 * Trust the workspace `dir` for the user of `env` with the real trust code (docs/workspace-trust.md),
 * as `legion trust` does: tests that write `.legion/config.yaml`, rules or participants before
 * Legion creates `.legion/` call this, so their workspace is honoured. There is no bypass in the product.
 */
export async function trustWorkspace(dir: string, env: Readonly<Record<string, string | undefined>>): Promise<void> {
  const written = await writeWorkspaceTrust(trustPlace(dir, env, env.HOME || homedir()));
  if (!written.ok) throw new Error(`trustWorkspace(${dir}): ${written.error}`);
}

/** The user config folder of a test whose HOME is `home` (and no XDG_CONFIG_HOME): what `initWorkspace` needs as `userDir`. */
export const testUserDir = (home: string): string => userConfigDir({ HOME: home }, home);
