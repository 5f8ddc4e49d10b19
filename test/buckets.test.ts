import { describe, expect, it } from 'vitest';
import { DEFAULT_RETENTION } from '../src/model/board.js';
import { bucketAt, isKept, parseBucketLabel } from '../src/model/buckets.js';
import { labelsAt } from './helpers/oracle.js';

const board = { epoch: new Date('2025-01-01T00:00:00.000Z') };

describe('buckets are UTC calendar slices', () => {
  it('labels every hour of three years as the oracle does, and parses each label back', () => {
    for (let at = Date.UTC(2024, 11, 20); at < Date.UTC(2027, 0, 10); at += 3_600_000 * 7) {
      const when = new Date(at);
      const expected = labelsAt(when);
      for (const period of ['DAILY', 'WEEKLY', 'MONTHLY', 'ALL_TIME'] as const) {
        const bucket = bucketAt(board, period, when);
        expect(bucket.label).toBe(expected[period]);
        if (period !== 'ALL_TIME') expect(bucket.start.getTime()).toBeLessThanOrEqual(at);
        if (bucket.end) expect(bucket.end.getTime()).toBeGreaterThan(at);
        expect(parseBucketLabel(board, period, bucket.label)).toEqual(bucket);
      }
    }
  });

  it('knows ISO weeks across year ends', () => {
    expect(bucketAt(board, 'WEEKLY', new Date('2026-12-31T12:00:00Z')).label).toBe('2026-W53');
    expect(bucketAt(board, 'WEEKLY', new Date('2027-01-03T23:59:59Z')).label).toBe('2026-W53');
    expect(bucketAt(board, 'WEEKLY', new Date('2027-01-04T00:00:00Z')).label).toBe('2027-W01');
    expect(bucketAt(board, 'WEEKLY', new Date('2024-12-30T00:00:00Z')).label).toBe('2025-W01');
  });

  it('refuses labels that name no bucket', () => {
    for (const [period, label] of [
      ['DAILY', '2026-02-29'],
      ['DAILY', '2026-11-31'],
      ['DAILY', '2026-1-01'],
      ['WEEKLY', '2025-W53'],
      ['WEEKLY', '2026-W00'],
      ['MONTHLY', '2026-13'],
      ['MONTHLY', '2026-00'],
      ['ALL_TIME', 'ALL'],
    ] as const) {
      expect(parseBucketLabel(board, period, label), `${period} ${label}`).toBeNull();
    }
    expect(parseBucketLabel(board, 'DAILY', '2028-02-29')?.label).toBe('2028-02-29');
  });

  it('keeps a bucket from its start until its end plus the retention', () => {
    const day = parseBucketLabel(board, 'DAILY', '2026-11-20')!;
    expect(isKept(day, DEFAULT_RETENTION, new Date('2026-11-27T23:59:59Z'))).toBe(true);
    expect(isKept(day, DEFAULT_RETENTION, new Date('2026-11-28T00:00:00Z'))).toBe(false);
    expect(isKept(day, DEFAULT_RETENTION, new Date('2026-11-19T23:00:00Z'))).toBe(false);
    expect(isKept(bucketAt(board, 'ALL_TIME', new Date()), DEFAULT_RETENTION, new Date('2090-01-01T00:00:00Z'))).toBe(true);
  });
});
