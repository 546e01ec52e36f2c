/**
 * Deterministic helpers of the many-merchants benchmark: a seeded generator and a Zipf sampler,
 * so that two runs (before and after a change) send the same mix of keys and screens.
 */

/** mulberry32: a small seeded generator of floats in [0, 1). */
export function seededFloats(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * Ranks 0..n-1 drawn with probability proportional to 1 / (rank + 1)^exponent (Zipf): rank 0 is
 * the busiest key. `random` gives floats in [0, 1).
 */
export function zipfSampler(n: number, exponent: number, random: () => number): () => number {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`n must be a positive integer; received ${n}`);
  const cumulative = new Float64Array(n);
  let total = 0;
  for (let rank = 0; rank < n; rank++) {
    total += 1 / (rank + 1) ** exponent;
    cumulative[rank] = total;
  }
  return () => {
    const target = random() * total;
    // The first rank whose cumulative weight exceeds the target.
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((cumulative[mid] as number) > target) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  };
}

/** One of `weights`' keys, each with its weight's share of the draws. */
export function weightedPicker<K extends string>(weights: Record<K, number>, random: () => number): () => K {
  const entries = Object.entries(weights) as [K, number][];
  const total = entries.reduce((sum, [, w]) => sum + w, 0);
  return () => {
    let target = random() * total;
    for (const [key, weight] of entries) {
      target -= weight;
      if (target < 0) return key;
    }
    return (entries[entries.length - 1] as [K, number])[0];
  };
}
