import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package root (the folder holding `config/legion.yaml`), found by walking up from
 * this module: `dist/legion.js` in the bundle, `src/cli/app-dir.ts` under tsx.
 */
export function findAppDir(from = import.meta.url): string {
  let dir = dirname(fileURLToPath(from));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'config', 'legion.yaml'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  throw new Error('cannot find the Legion package folder (config/legion.yaml)');
}
