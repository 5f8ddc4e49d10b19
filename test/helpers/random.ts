/**
 * The tests' one random generator: seeded (mulberry32), so that a failure can be replayed from its
 * seed. `next()` answers a number in [0, 1); the helpers build on it.
 */
export interface Random {
  (): number;
  /** The seed it was made from, for a failure message. */
  readonly seed: number;
  /** An integer in [min, max]. */
  int(min: number, max: number): number;
  /** One of `items`, each as likely. */
  pick<T>(items: readonly T[]): T;
  /** True with probability `p`. */
  chance(p: number): boolean;
}

export function seeded(seed: number): Random {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  const random = next as Random;
  Object.defineProperty(random, 'seed', { value: seed });
  random.int = (min, max) => min + Math.floor(next() * (max - min + 1));
  random.pick = (items) => {
    if (items.length === 0) throw new Error('pick from nothing');
    return items[Math.floor(next() * items.length)]!;
  };
  random.chance = (p) => next() < p;
  return random;
}
