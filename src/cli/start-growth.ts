import { growYoungForStart } from './young-generation';

/**
 * Evaluated first of the app's modules (src/cli/main.ts imports it before anything else), so
 * the young generation grows at once while the modules evaluate too (young-generation.ts).
 * Ended by main for every command but the full-screen start, which ends it once its first
 * frame is drawn (src/cli/start-screen.ts). Idempotent.
 */
export const endStartGrowth: () => void = growYoungForStart();
