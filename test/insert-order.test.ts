import { describe, expect, it } from 'vitest';
import { roughlyDescending } from '../src/ranking/insert-order.js';
import { seeded } from './helpers/random.js';

/** [packed, member, …] of `count` members with packed scores drawn by `score`. */
function pairsOf(count: number, score: (i: number) => number): (string | number)[] {
  const pairs: (string | number)[] = [];
  for (let i = 0; i < count; i++) pairs.push(score(i), `p${i}`);
  return pairs;
}

/** The pairs as "packed member" strings, sorted: equal for two lists holding the same pairs, whatever their order. */
const asSet = (pairs: readonly (string | number)[]) => Array.from({ length: pairs.length / 2 }, (_v, i) => `${pairs[2 * i]} ${pairs[2 * i + 1]}`).sort();

describe('roughlyDescending', () => {
  it('keeps every pair whole, and no other', () => {
    const random = seeded(41);
    const pairs = pairsOf(5_000, () => random.int(0, 2 ** 40));
    const ordered = roughlyDescending(pairs);
    expect(ordered).toHaveLength(pairs.length);
    expect(asSet(ordered)).toEqual(asSet(pairs));
  });

  it('puts no member after one whose packed score is lower by more than a bucket’s width', () => {
    const random = seeded(42);
    const count = 4_000;
    const pairs = pairsOf(count, () => random.int(0, 2 ** 45));
    const ordered = roughlyDescending(pairs);
    const scores = pairs.filter((_v, i) => i % 2 === 0) as number[];
    const width = (Math.max(...scores) - Math.min(...scores)) / (Math.ceil(count / 8) - 1);
    // Oracle: a member may come after another only when its score is below that one's plus a bucket's width.
    let lowestSoFar = Infinity;
    for (let i = 0; i < ordered.length; i += 2) {
      const packed = ordered[i] as number;
      expect(packed).toBeLessThan(lowestSoFar + width);
      lowestSoFar = Math.min(lowestSoFar, packed);
    }
  });

  it('is far closer to the sorted order than the input was', () => {
    const random = seeded(43);
    const pairs = pairsOf(2_000, () => random.int(0, 1_000_000));
    const inversions = (list: readonly (string | number)[]) => {
      let count = 0;
      for (let i = 0; i < list.length; i += 2) for (let j = i + 2; j < list.length; j += 2) if ((list[j] as number) > (list[i] as number)) count++;
      return count;
    };
    // A random order has about half of all pairs inverted; buckets of about 8 leave a few each.
    expect(inversions(roughlyDescending(pairs))).toBeLessThan(inversions(pairs) / 50);
  });

  it('leaves equal scores, and a few members, in the order given', () => {
    const equal = pairsOf(100, () => 7);
    expect(roughlyDescending(equal)).toEqual(equal);
    const few = pairsOf(8, (i) => i);
    expect(roughlyDescending(few)).toEqual(few);
    expect(roughlyDescending([])).toEqual([]);
  });
});
