import { describe, expect, it } from 'vitest';
import type { Board } from '../src/model/board.js';
import { MAX_BOARD_SCORE } from '../src/model/contract.js';
import { pack, packingFor, unpack } from '../src/ranking/packing.js';
import { rankEntries } from './helpers/oracle.js';
import { seeded } from './helpers/random.js';

const START = new Date('2026-11-01T00:00:00.000Z');
const board = (maxScore: number, order: Board['order']) => ({ maxScore, order });

describe('packing a score and its time into one double', () => {
  it('never exceeds 2^53, at the largest maxScore and the end of the span', () => {
    for (const order of ['HIGH_FIRST', 'LOW_FIRST'] as const) {
      const b = board(MAX_BOARD_SCORE, order);
      for (const period of ['ALL_TIME', 'DAILY'] as const) {
        const packing = packingFor(b, period);
        for (const score of [0, MAX_BOARD_SCORE]) {
          const packed = pack(b, packing, score, new Date(START.getTime() + 2 ** 41), START);
          expect(Number.isSafeInteger(packed)).toBe(true);
          expect(pack(b, packing, score, START, START)).toBeLessThanOrEqual(Number.MAX_SAFE_INTEGER);
        }
      }
    }
  });

  it('refuses a maxScore above the ceiling', () => {
    expect(() => packingFor(board(MAX_BOARD_SCORE + 1, 'HIGH_FIRST'), 'ALL_TIME')).toThrow(RangeError);
  });

  it('orders exactly like (score, then earlier time) for random data at every scale', () => {
    const next = seeded(7);
    for (const maxScore of [1, 100, 8_000, 1_000_000_000, MAX_BOARD_SCORE]) {
      for (const order of ['HIGH_FIRST', 'LOW_FIRST'] as const) {
        const b = board(maxScore, order);
        const packing = packingFor(b, 'ALL_TIME');
        const items = Array.from({ length: 2_000 }, () => ({
          score: Math.floor(next() * (maxScore + 1)),
          // Whole tie-break units, so that distinct times never share a unit.
          at: new Date(START.getTime() + Math.floor(next() * 10_000) * packing.unitMs),
        }));
        const byPacked = [...items].sort((x, y) => pack(b, packing, y.score, y.at, START) - pack(b, packing, x.score, x.at, START));
        // The rule is the oracle's rank order; items tied on both keep no order either way, so ids are left out.
        const byRule = rankEntries(
          { order },
          items.map((item) => ({ ...item, playerId: '', reachedAt: item.at.getTime() })),
        );
        expect(byPacked.map((i) => [i.score, i.at.getTime()])).toEqual(byRule.map((i) => [i.score, i.at.getTime()]));
        for (const item of items.slice(0, 100)) {
          expect(unpack(b, packing, pack(b, packing, item.score, item.at, START), START)).toEqual({
            score: item.score,
            reachedAt: item.at,
            tieBreakValues: [],
          });
        }
      }
    }
  });

  it('breaks ties to the millisecond where the score leaves room, and coarser where it does not', () => {
    expect(packingFor(board(8_000, 'HIGH_FIRST'), 'ALL_TIME').unitMs).toBe(1);
    expect(packingFor(board(1_000_000, 'HIGH_FIRST'), 'DAILY').unitMs).toBe(1);
    expect(packingFor(board(1_000_000_000, 'HIGH_FIRST'), 'DAILY').unitMs).toBe(16);
    expect(packingFor(board(1_000_000_000, 'HIGH_FIRST'), 'ALL_TIME').unitMs).toBe(2 ** 17);
    expect(packingFor(board(MAX_BOARD_SCORE, 'HIGH_FIRST'), 'ALL_TIME').unitMs).toBe(2 ** 26);
  });

  it('clamps times outside the span instead of wrapping them', () => {
    const b = board(100, 'HIGH_FIRST');
    const packing = packingFor(b, 'DAILY');
    expect(pack(b, packing, 5, new Date(START.getTime() - 1_000), START)).toBe(pack(b, packing, 5, START, START));
    const late = pack(b, packing, 5, new Date(START.getTime() + 10 * 86_400_000), START);
    expect(late).toBeLessThan(pack(b, packing, 5, new Date(START.getTime() + 1_000), START));
    expect(late).toBeGreaterThan(pack(b, packing, 4, START, START));
  });
});
