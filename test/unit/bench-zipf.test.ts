import { describe, expect, it } from 'vitest';
import { seededFloats, weightedPicker, zipfSampler } from '../bench/zipf.ts';

describe('the many-merchants benchmark mix', () => {
  it('draws ranks with Zipf shares: rank 0 about twice rank 1, every rank in range, the same for the same seed', () => {
    const draw = zipfSampler(2_000, 1, seededFloats(7));
    const counts = new Array<number>(2_000).fill(0);
    const draws = 200_000;
    let outOfRange = 0;
    for (let i = 0; i < draws; i++) {
      const rank = draw();
      if (!(rank >= 0 && rank < 2_000)) outOfRange++;
      else counts[rank] = (counts[rank] ?? 0) + 1;
    }
    expect(outOfRange).toBe(0);
    // H(2000) ≈ 8.18: rank 0 takes about 12.2 % of the draws, rank 1 half of that, rank 9 a tenth.
    expect((counts[0] ?? 0) / draws).toBeCloseTo(1 / 8.18, 2);
    expect((counts[0] ?? 0) / (counts[1] ?? 1)).toBeGreaterThan(1.8);
    expect((counts[0] ?? 0) / (counts[1] ?? 1)).toBeLessThan(2.2);
    expect(counts.filter((c) => c > 0).length).toBeGreaterThan(1_500);
    const again = zipfSampler(2_000, 1, seededFloats(7));
    const first = zipfSampler(2_000, 1, seededFloats(7));
    expect(Array.from({ length: 100 }, again)).toEqual(Array.from({ length: 100 }, first));
  });

  it('picks screens by weight', () => {
    const pick = weightedPicker({ a: 3, b: 1 }, seededFloats(1));
    const draws = Array.from({ length: 40_000 }, pick);
    expect(draws.filter((d) => d === 'a').length / draws.length).toBeCloseTo(0.75, 1);
  });
});
