import { setFlagsFromString, startupSnapshot } from 'node:v8';

/** V8's default `--semi-space-growth-factor`. */
const DEFAULT_GROWTH = 2;
/**
 * The factor while a full-screen start composes and draws its first frame: the young
 * generation grows to its largest size at the first scavenge that finds most objects alive,
 * which at start they are (modules, stores, the UI's tree).
 */
const START_GROWTH = 8;

/** The factor in force outside `withoutYoungGrowth` (the default, or START_GROWTH during a start). */
let growth = DEFAULT_GROWTH;

/**
 * Until the returned `end` is called (idempotent): V8's young generation grows at once instead
 * of doubling at each scavenge (docs/performance.md#start-up). A start allocates ~20 MB that
 * mostly lives on (modules, stores, the first frame's tree); with the default growth, seven
 * scavenges copy it around and promote it, and the old generation it fills makes V8 run a
 * full mark-compact before the first frame. Growing at once leaves two or three scavenges and
 * no mark-compact (~20 ms less garbage collection on the loaded machine).
 * `end` restores the default: V8's code cache records its flags when written (at exit), and
 * a cache written with another growth factor is rejected at the next start.
 */
export function growYoungForStart(): () => void {
  if (growth === START_GROWTH) return () => undefined; // already growing: the first caller ends it
  growth = START_GROWTH;
  setFlagsFromString(`--semi-space-growth-factor=${growth}`);
  let ended = false;
  if (startupSnapshot.isBuildingSnapshot()) {
    // Evaluated into the start-up snapshot (scripts/snapshot-entry.cjs): V8 records its flags in
    // the snapshot and refuses it to a Node with others, so the default while it is written,
    // and the start's growth again once it is deserialized.
    startupSnapshot.addSerializeCallback(() => setFlagsFromString(`--semi-space-growth-factor=${DEFAULT_GROWTH}`));
    startupSnapshot.addDeserializeCallback(() => {
      if (!ended) setFlagsFromString(`--semi-space-growth-factor=${START_GROWTH}`);
    });
  }
  return () => {
    if (ended) return;
    ended = true;
    growth = DEFAULT_GROWTH;
    setFlagsFromString(`--semi-space-growth-factor=${growth}`);
  };
}

/**
 * Run `load` with V8's young generation kept at its current size. Loading a long run makes
 * nearly everything it allocates survive (the histories), which is what makes V8 grow the
 * semi-spaces, up to 2 × 16 MB, counted in RSS until an idle GC some ten seconds later, for
 * no gain: survivors are copied to the old generation either way. Measured with 100,000
 * messages: ~28 MB less RSS, no slower. The growth in force before is restored afterwards
 * (a flag set with NODE_OPTIONS is overridden too).
 */
export async function withoutYoungGrowth<T>(load: () => Promise<T>): Promise<T> {
  setFlagsFromString('--semi-space-growth-factor=1');
  try {
    return await load();
  } finally {
    setFlagsFromString(`--semi-space-growth-factor=${growth}`);
  }
}
