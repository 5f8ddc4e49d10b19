import type { ExportRow, ExportSnapshot, StreamStandingsOptions } from '../db/export.js';
import type { FreezeList } from '../db/frozen.js';
import type { Storage } from '../db/storage.js';
import { PERIODS, type Period, type RankStyle } from '../model/board.js';
import type { BoardBucket } from '../ranking/index.js';
import { type BucketDeps, freezeListOf, requireBoard, requireRegion, resolveBoardBucket } from '../services/buckets.js';
import { SEASON_LABEL, seasonBucket } from '../services/season-directory.js';

/**
 * A bucket's whole standings as a file (issue 21, item 4): CSV or NDJSON, in rank order, streamed
 * from one snapshot of PostgreSQL with bounded memory (db/export.ts). `GET /export`
 * (http/export-route.ts) and the CLI's `export` (cli.ts) both run it. See docs/export.md.
 */

export const EXPORT_FORMATS = ['csv', 'ndjson'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
export const RANK_STYLES: readonly RankStyle[] = ['ORDINAL', 'COMPETITION', 'DENSE'];

/** The parameters an export takes, by the names the route and the CLI give them. */
export const EXPORT_PARAMETERS = ['board', 'period', 'bucket', 'region', 'format', 'rankStyle'] as const;
export type ExportParameter = (typeof EXPORT_PARAMETERS)[number];

/** The longest value a parameter takes: an id's bound (1 to 128 printable characters) for every one. */
export const MAX_EXPORT_PARAMETER_LENGTH = 128;

/** The columns of every export, in order. */
export const EXPORT_COLUMNS = ['rank', 'playerId', 'displayName', 'score', 'achievedAt', 'metadata'] as const;

/** What an export is asked for, as text (a query string's values, or the CLI's options); left out: undefined. */
export type ExportParameters = Partial<Record<ExportParameter, string | undefined>>;

/** An export's parameters, their shapes checked. */
export interface ExportRequest {
  board: string;
  period: Period;
  bucket?: string | undefined;
  region?: string | undefined;
  format: ExportFormat;
  /** Default: the board's. */
  rankStyle?: RankStyle | undefined;
}

/**
 * A parameter an export refuses: which (one of EXPORT_PARAMETERS, or an unknown one as given), why,
 * and the contract's code for it (NOT_FOUND for what names nothing, BAD_USER_INPUT otherwise).
 */
export class ExportRefusal extends Error {
  override name = 'ExportRefusal';
  constructor(
    readonly parameter: string,
    readonly code: 'BAD_USER_INPUT' | 'NOT_FOUND',
    message: string,
  ) {
    super(`${parameter}: ${message}`);
  }
}

/** What exporting takes: the bucket's resolution (boards, seasons, clock) and the record's streaming read. */
export interface ExportDeps extends BucketDeps {
  storage: Pick<Storage, 'exports'>;
}

/** An export resolved and checked, not started yet. */
export interface PreparedExport {
  boardId: string;
  period: Period;
  /** The bucket's label: the one asked for, or the open bucket's when none was. */
  bucket: string;
  region: string | null;
  format: ExportFormat;
  rankStyle: RankStyle;
  /** The response's media type. */
  contentType: string;
  /** A file name of letters, digits, '.', '_' and '-' only (safe in a Content-Disposition header and on any file system). */
  filename: string;
  /** The list the standings are read from. */
  list: FreezeList;
}

/** Where an export's bytes go. */
export interface ExportSink {
  /** Told the snapshot before any byte: the instant the standings are as of, or that they are final. */
  opened(snapshot: ExportSnapshot): void | Promise<void>;
  /** Takes the next text, in order; the next batch is read from PostgreSQL once the promise settles (backpressure). */
  write(text: string): void | Promise<void>;
}

export interface ExportOptions extends Pick<StreamStandingsOptions, 'batchRows' | 'bounds' | 'signal'> {
  /** Told how many rows each batch read from PostgreSQL holds, before it is written (for a metric). */
  read?: ((rows: number) => void) | undefined;
}

/** `value` when it is one of `allowed`, else a refusal of `parameter` naming them. */
function oneOf<T extends string>(parameter: ExportParameter, value: string, allowed: readonly T[]): T {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new ExportRefusal(parameter, 'BAD_USER_INPUT', `"${value}" is not one of ${allowed.join(', ')}.`);
}

/** Control characters, which no id, label or region holds. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Checks the parameters' shapes (each bounded first, before anything else reads it): `board` is
 * required; `period` defaults to ALL_TIME, `format` to csv, `rankStyle` to the board's. O(total length).
 */
export function exportRequestOf(parameters: ExportParameters): ExportRequest {
  for (const parameter of EXPORT_PARAMETERS) {
    const value = parameters[parameter];
    if (value === undefined) continue;
    if (value.length === 0 || value.length > MAX_EXPORT_PARAMETER_LENGTH || CONTROL.test(value)) {
      throw new ExportRefusal(parameter, 'BAD_USER_INPUT', `takes 1 to ${MAX_EXPORT_PARAMETER_LENGTH} printable characters.`);
    }
  }
  if (parameters.board === undefined) throw new ExportRefusal('board', 'BAD_USER_INPUT', 'is required: the id of the board to export.');
  const period = oneOf('period', parameters.period ?? 'ALL_TIME', PERIODS);
  const format = oneOf('format', parameters.format ?? 'csv', EXPORT_FORMATS);
  const rankStyle = parameters.rankStyle === undefined ? undefined : oneOf('rankStyle', parameters.rankStyle, RANK_STYLES);
  return { board: parameters.board, period, bucket: parameters.bucket, region: parameters.region, format, rankStyle };
}

/**
 * A service refusal (GraphQLError with a contract code) blamed on `parameter`; anything else (a
 * store away) as it is. By name, not instanceof: graphql may be loaded twice under a loader.
 */
async function blaming<T>(parameter: ExportParameter, work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const code = (error as { extensions?: { code?: unknown } }).extensions?.code;
    if (error instanceof Error && error.name === 'GraphQLError' && (code === 'BAD_USER_INPUT' || code === 'NOT_FOUND')) {
      throw new ExportRefusal(parameter, code, error.message);
    }
    throw error;
  }
}

/**
 * Resolves what an export names, as the reads do (services/buckets.ts resolveBoardBucket), each
 * refusal blamed on its parameter: the board, then the region, the period, the bucket. A closed
 * season (which the reads of the index no longer resolve) is exported from its frozen standings.
 * O(1) for a known board's calendar bucket; a query for an unknown board or a season.
 */
export async function prepareExport(deps: BucketDeps, parameters: ExportParameters): Promise<PreparedExport> {
  const request = exportRequestOf(parameters);
  const { period, format } = request;
  const board = await blaming('board', async () => deps.boards.known(request.board) ?? (await requireBoard(deps, request.board)));
  const region = await blaming('region', () => requireRegion(board, request.region));
  if (!board.periods.includes(period)) {
    throw new ExportRefusal('period', 'BAD_USER_INPUT', `board "${board.id}" keeps ${board.periods.join(', ')}, not ${period}.`);
  }
  const closedSeason =
    period === 'SEASON' && request.bucket !== undefined && SEASON_LABEL.test(request.bucket) ? await deps.seasons.named(board.id, request.bucket) : null;
  const at: BoardBucket = closedSeason?.closedAt
    ? { board, bucket: seasonBucket(closedSeason), region }
    : await blaming('bucket', () => resolveBoardBucket(deps, { board: board.id, period, bucket: request.bucket, region }));
  const name = [board.id, period, at.bucket.label, ...(region === null ? [] : [region])].join('-').replace(/[^A-Za-z0-9._-]/g, '_');
  return {
    boardId: board.id,
    period,
    bucket: at.bucket.label,
    region,
    format,
    rankStyle: request.rankStyle ?? board.rankStyle,
    contentType: format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson',
    filename: `leaderboard-${name}.${format}`,
    list: freezeListOf(at),
  };
}

/**
 * Streams a prepared export into `sink`: the snapshot, then the CSV header row, then every standing
 * in rank order, one batch of text at a time, each written before the next batch is read. Ranks in
 * `rankStyle`: ORDINAL as ranked (a frozen bucket's rank as frozen, so an erased player leaves a
 * gap); COMPETITION, a tie shares the first rank of its score; DENSE, a tie shares its score's
 * place among the distinct scores; both counted as the rows come, erased players' rows included
 * (their scores still count, as in the frozen reads). Answers how many standings were written.
 * O(N) time, O(batch) memory.
 */
export async function runExport(deps: Pick<ExportDeps, 'storage'>, prepared: PreparedExport, sink: ExportSink, options: ExportOptions = {}): Promise<number> {
  const rankOf = shareRanks(prepared.rankStyle);
  const line = prepared.format === 'csv' ? csvLine : ndjsonLine;
  let written = 0;
  await deps.storage.exports.stream(
    prepared.list,
    {
      async opened(snapshot) {
        await sink.opened(snapshot);
        if (prepared.format === 'csv') await sink.write(`${EXPORT_COLUMNS.join(',')}\r\n`);
      },
      async rows(batch) {
        options.read?.(batch.length);
        let text = '';
        for (const row of batch) {
          const rank = rankOf(row[0], row[3], row[6]);
          if (row[1] === null) continue;
          text += line(rank, row);
          written += 1;
        }
        if (text !== '') await sink.write(text);
      },
    },
    options,
  );
  return written;
}

/**
 * The rank of each row of a run in rank order, in `style`, from its ordinal rank, score and
 * tie-break values (their text; null on a board without columns): rows share a rank when the whole
 * tuple is equal. O(1) a row.
 */
function shareRanks(style: RankStyle): (ordinal: number, score: number, tieBreakValues: string | null) => number {
  if (style === 'ORDINAL') return (ordinal) => ordinal;
  let lastScore: number | undefined;
  let lastValues: string | null = null;
  let lastRank = 0;
  return (ordinal, score, tieBreakValues) => {
    if (score !== lastScore || tieBreakValues !== lastValues) lastRank = style === 'COMPETITION' ? ordinal : lastRank + 1;
    lastScore = score;
    lastValues = tieBreakValues;
    return lastRank;
  };
}

/**
 * A cell a spreadsheet would take for a formula (=, +, -, @, and a leading tab or carriage return,
 * as OWASP's CSV injection advice lists) is prefixed with a single quote, so it shows as text.
 */
const FORMULA_START = /^[=+\-@\t\r]/;
/** A field that must be quoted in RFC 4180: it holds a comma, a double quote, a CR or a LF. */
const NEEDS_QUOTES = /[",\r\n]/;

/** A text field of a CSV row: neutralised, then quoted (quotes doubled) when RFC 4180 asks. */
function csvText(value: string): string {
  const safe = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** One CSV row, CRLF-ended. The rank, score and instant never need quoting or neutralising: scores are 0 or more. */
function csvLine(rank: number, row: ExportRow): string {
  const [, playerId, displayName, score, reachedMs, metadata] = row;
  return `${rank},${csvText(playerId!)},${csvText(displayName ?? '')},${score},${new Date(reachedMs).toISOString()},${csvText(metadata ?? '')}\r\n`;
}

/**
 * One NDJSON line. The metadata is the stored JSON text itself (it is valid JSON: PostgreSQL's json
 * type checks it), its line breaks, which JSON allows only between tokens, made spaces so that it
 * stays on its line.
 */
function ndjsonLine(rank: number, row: ExportRow): string {
  const [, playerId, displayName, score, reachedMs, metadata] = row;
  const json = metadata === null ? 'null' : metadata.replace(/[\r\n]/g, ' ');
  return `{"rank":${rank},"playerId":${JSON.stringify(playerId)},"displayName":${JSON.stringify(displayName)},"score":${score},"achievedAt":"${new Date(reachedMs).toISOString()}","metadata":${json}}\n`;
}
