/** The candidate closest to what was typed, if it is close enough to be a typo of it. */
export function closest(typed: string, candidates: string[]): string | undefined {
  return closests(typed, candidates)[0];
}

/** The candidates equally closest to what was typed, if close enough to be a typo of it. */
export function closests(typed: string, candidates: string[]): string[] {
  const limit = Math.max(2, Math.floor(typed.length / 3));
  const scored = candidates
    .map((candidate) => ({ candidate, distance: editDistance(typed, candidate) }))
    .filter((c) => c.distance <= limit);
  const best = Math.min(...scored.map((c) => c.distance));
  return scored.filter((c) => c.distance === best).map((c) => c.candidate);
}

/** Levenshtein distance between two words. */
export function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

/** A word as a POSIX shell reads it back unchanged. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
