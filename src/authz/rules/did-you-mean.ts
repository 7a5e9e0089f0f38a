/**
 * "Did you mean" suggestions for rule files: the closest candidate by optimal string
 * alignment distance (Levenshtein plus adjacent transpositions), when it is close enough
 * to be a likely typo (at most 1 edit for short words, 2 up to 8 characters, 3 beyond).
 */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => {
    const row = new Array<number>(cols).fill(0);
    row[0] = i;
    return row;
  });
  for (let j = 0; j < cols; j++) d[0]![j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** The closest candidate if it is a plausible typo of `word`, else null. Case-insensitive. */
export function suggest(word: string, candidates: readonly string[]): string | null {
  const w = word.toLowerCase();
  const limit = w.length <= 4 ? 1 : w.length <= 8 ? 2 : 3;
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const distance = editDistance(w, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best !== null && bestDistance <= limit && bestDistance > 0 ? best : best !== null && bestDistance === 0 && best !== word ? best : null;
}

/** ` (did you mean "x"?)` or an empty string. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const hit = suggest(word, candidates);
  return hit ? ` (did you mean "${hit}"?)` : '';
}
