import { describe, expect, it } from 'vitest';
import { roughlyDescending } from '../src/ranking/insert-order.js';
import { seeded } from './helpers/random.js';

/** `count` packed scores drawn by `score`. */
const packedOf = (count: number, score: (i: number) => number) => Float64Array.from({ length: count }, (_v, i) => score(i));

/** The packed scores in the order given by `order`. */
const inOrder = (packed: Float64Array, order: Uint32Array) => Array.from(order, (i) => packed[i]!);

describe('roughlyDescending', () => {
  it('answers every index once, and no other', () => {
    const random = seeded(41);
    const packed = packedOf(5_000, () => random.int(0, 2 ** 40));
    const order = roughlyDescending(packed);
    expect(order).toHaveLength(packed.length);
    // Oracle: the indexes 0 … n-1, each once.
    expect([...order].sort((a, b) => a - b)).toEqual(Array.from({ length: packed.length }, (_v, i) => i));
  });

  it('puts no member after one whose packed score is lower by more than a bucket’s width', () => {
    const random = seeded(42);
    const count = 4_000;
    const packed = packedOf(count, () => random.int(0, 2 ** 45));
    const width = (Math.max(...packed) - Math.min(...packed)) / (Math.ceil(count / 8) - 1);
    // Oracle: a member may come after another only when its score is below that one's plus a bucket's width.
    let lowestSoFar = Infinity;
    for (const value of inOrder(packed, roughlyDescending(packed))) {
      expect(value).toBeLessThan(lowestSoFar + width);
      lowestSoFar = Math.min(lowestSoFar, value);
    }
  });

  it('is far closer to the sorted order than the input was', () => {
    const random = seeded(43);
    const packed = packedOf(2_000, () => random.int(0, 1_000_000));
    const inversions = (list: readonly number[]) => {
      let count = 0;
      for (let i = 0; i < list.length; i++) for (let j = i + 1; j < list.length; j++) if (list[j]! > list[i]!) count++;
      return count;
    };
    // A random order has about half of all pairs inverted; buckets of about 8 leave a few each.
    expect(inversions(inOrder(packed, roughlyDescending(packed)))).toBeLessThan(inversions([...packed]) / 50);
  });

  it('leaves equal scores, and a few members, in the order given', () => {
    const identity = (n: number) => Array.from({ length: n }, (_v, i) => i);
    expect([...roughlyDescending(packedOf(100, () => 7))]).toEqual(identity(100));
    expect([...roughlyDescending(packedOf(8, (i) => i))]).toEqual(identity(8));
    expect([...roughlyDescending(new Float64Array(0))]).toEqual([]);
  });
});
