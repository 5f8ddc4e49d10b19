import { type MonthLabel, PartitionError, monthRange } from '../db/partitions.js';
import { type Period, keepsBoardScores } from '../model/board.js';
import { bucketAt, keptUntil } from '../model/buckets.js';
import type { Storage } from '../db/storage.js';
import type { BoardDirectory } from '../services/board-directory.js';
import type { SeasonDirectory } from '../services/season-directory.js';

/**
 * Archiving a month of the score log, kept from taking what a board still reads: a BEST board's
 * day, week, month and season are derived from the log (keepsBoardScores), so a month's results are
 * read by every rebuild of those buckets for as long as any of them is kept (a MONTHLY bucket, the
 * board's monthly retention after the month ends; an open season, until it is closed). Detaching
 * the month before then would leave those buckets to be rebuilt without it.
 */

/** A board that still reads a month of the log, and until when (null: until its open season is closed). */
/** What archiving a month of the log takes. */
export interface ArchiveDeps {
  storage: Pick<Storage, 'results'>;
  boards: Pick<BoardDirectory, 'list'>;
  seasons: Pick<SeasonDirectory, 'live'>;
  now(): Date;
}

export interface MonthReader {
  board: string;
  period: Period;
  until: Date | null;
}

/**
 * The boards whose derived buckets still read `month` (a UTC month of the log) at the services'
 * clock: for each derived calendar period, the last of its buckets that holds an instant of the
 * month (on every list's calendar), while it is kept; and every open season that overlaps the
 * month. O(boards · periods · regions), plus the live seasons from the directory.
 */
export async function monthReaders(deps: Omit<ArchiveDeps, 'storage'>, month: MonthLabel): Promise<MonthReader[]> {
  const { start, end } = monthRange(month);
  const now = deps.now();
  const readers: MonthReader[] = [];
  for (const board of await deps.boards.list()) {
    for (const period of board.periods) {
      if (period === 'ALL_TIME' || keepsBoardScores(board, period)) continue;
      if (period === 'SEASON') {
        const open = (await deps.seasons.live(board.id)).filter((s) => s.startsAt < end && (!s.endsAt || s.endsAt > start));
        if (open.length > 0) readers.push({ board: board.id, period, until: null });
        continue;
      }
      const untils = [null, ...board.regions].map((region) => keptUntil(bucketAt(board, period, new Date(end.getTime() - 1), region), board.retention)!);
      const until = new Date(Math.max(...untils.map((at) => at.getTime())));
      if (until > now) readers.push({ board: board.id, period, until });
    }
  }
  return readers;
}

/**
 * Detaches a past month's partition for archiving (db/partitions.ts detachResultPartition), once no
 * board reads it any more (see monthReaders); refused with a PartitionError naming who reads it,
 * and until when, before that. Answers the detached table's name.
 */
export async function detachMonth(deps: ArchiveDeps, month: MonthLabel): Promise<string> {
  const readers = await monthReaders(deps, month);
  if (readers.length > 0) {
    const who = readers.map(
      ({ board, period, until }) => `board "${board}" ${period} (${until ? `until ${until.toISOString()}` : 'until its open season is closed'})`,
    );
    throw new PartitionError(`${month} is still read by buckets derived from the score log: ${who.join(', ')}; archive it after that`);
  }
  return deps.storage.results.partitions.detach(month, deps.now());
}
