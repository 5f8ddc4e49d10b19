/**
 * The operator's command line: `npm run cli -- <command> [options]`, configured from the same
 * environment as the server (see config.ts). `npm run cli -- help` lists the commands.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import type { Logger } from 'pino';
import type { Role } from './auth/keys.js';
import { issueApiKey, listApiKeys, revokeApiKey } from './writes/api-keys.js';
import { type Config, ConfigError, loadConfig, redisTarget } from './config.js';
import { createDatabase } from './db/client.js';
import { PartitionError, isMonthLabel, partitionName } from './db/partitions.js';
import { liveBucketsWithScores } from './jobs/index-recovery.js';
import { rebuildBucket } from './writes/rebuild-bucket.js';
import { createLogger } from './logger.js';
import { PERIODS, type Period } from './model/board.js';
import { RebuildRunningError } from './ranking/index.js';
import { bucketKey } from './ranking/keys.js';
import { createRedisClient } from './redis.js';
import { type Storage, createStorage } from './db/storage.js';
import { createIndexGeneration, guardReads } from './ranking/generation.js';
import { type RankingIndex, createRankingIndex } from './ranking/index.js';
import { type BoardDirectory, createBoardDirectory } from './services/board-directory.js';
import { resolveBoardBucket } from './services/buckets.js';
import { type SeasonDirectory, createSeasonDirectory } from './services/season-directory.js';
import { detachMonth } from './writes/archive.js';
import { ExportRefusal, prepareExport, runExport } from './reads/export.js';

type Options = NonNullable<ParseArgsConfig['options']>;
type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

/** What the commands use (7 members): the record, the index, this process's boards and seasons, the clock. */
interface CliParts {
  storage: Storage;
  index: RankingIndex;
  boards: BoardDirectory;
  seasons: SeasonDirectory;
  /**
   * Holds no key: a key the CLI revokes is forgotten by every serving process through PostgreSQL's
   * notification (Storage.apiKeys.listenForChanges), not through this process.
   */
  keyring: { forget(): void };
  now(): Date;
  log: Logger;
}

/** One subcommand: its options (node:util parseArgs) and what it does with the parts. */
interface Command {
  usage: string;
  summary: string;
  options: Options;
  run(values: Values, parts: CliParts, out: (line: string) => void): Promise<void>;
}

/** Wrong arguments: the usage is printed and the exit code is 2. */
class UsageError extends Error {}

function stringOption(values: Values, name: string, required: true): string;
function stringOption(values: Values, name: string, required?: false): string | undefined;
function stringOption(values: Values, name: string, required = false): string | undefined {
  const value = values[name];
  if (typeof value === 'string') return value;
  if (required) throw new UsageError(`--${name} is required`);
  return undefined;
}

const ROLES = ['server', 'admin'] as const;

/** `--boards a,b`: the ids, spaces around them dropped; left out or empty, none (every board). Ids are kept as written: "Race" is not "race". */
const boardList = (option: string | undefined): string[] => (option ?? '').split(',').flatMap((id) => (id.trim() ? [id.trim()] : []));

/** How a key's scope reads after its role: `, boards a,b`, or nothing for every board. */
const scopeText = (boards: readonly string[]) => (boards.length ? `, boards ${boards.join(',')}` : '');

const commands: Record<string, Command> = {
  'keys create': {
    usage: 'keys create --role server|admin --name NAME [--boards ID,ID]',
    summary:
      'Makes an API key and prints it once; only its SHA-256 digest is stored. --boards: a game-server key that may write results and joins to those boards only.',
    options: { role: { type: 'string', default: 'server' }, name: { type: 'string' }, boards: { type: 'string' } },
    async run(values, parts, out) {
      const role = stringOption(values, 'role', true);
      if (!(ROLES as readonly string[]).includes(role)) throw new UsageError('--role must be server or admin');
      const name = stringOption(values, 'name', true);
      const boards = boardList(stringOption(values, 'boards'));
      // A scope refused (an admin key with boards, a board nobody made) is said as the API says it; exit code 1.
      const { key, stored } = await issueApiKey(parts, { name, role: role as Role, boards });
      out(`created ${stored.id} (${role}, "${name}"${scopeText(stored.boards)}). The key, shown this once:`);
      out(key);
    },
  },
  'keys list': {
    usage: 'keys list',
    summary: 'Lists the keys made with the CLI (never the keys themselves).',
    options: {},
    async run(_values, parts, out) {
      for (const key of await listApiKeys(parts)) {
        const state = key.revokedAt ? `revoked ${key.revokedAt.toISOString()}` : 'live';
        out(
          `${key.id}\t${key.role}\t${key.name}\tcreated ${key.createdAt.toISOString()}\t${state}\t${key.boards.length ? `boards ${key.boards.join(',')}` : 'every board'}`,
        );
      }
    },
  },
  'keys revoke': {
    usage: 'keys revoke --key ID_OR_NAME',
    summary: 'Revokes a key; every running process refuses it at once.',
    options: { key: { type: 'string' } },
    async run(values, parts, out) {
      const count = (await revokeApiKey(parts, stringOption(values, 'key', true))).length;
      if (count === 0) throw new UsageError('no live key has that id or name');
      out(`revoked ${count} key${count === 1 ? '' : 's'}`);
    },
  },
  rebuild: {
    usage: 'rebuild --board ID [--period ALL_TIME|SEASON|MONTHLY|WEEKLY|DAILY] [--bucket LABEL] [--region REGION] | rebuild --all',
    summary:
      "Rebuilds one bucket's ranking index from PostgreSQL (the current bucket when --bucket is left out) and swaps it in; --all rebuilds every live bucket of every board (after restoring PostgreSQL by hand, say).",
    options: {
      all: { type: 'boolean', default: false },
      board: { type: 'string' },
      period: { type: 'string', default: 'ALL_TIME' },
      bucket: { type: 'string' },
      region: { type: 'string' },
    },
    async run(values, parts, out) {
      if (values.all === true) {
        if (values.board !== undefined) throw new UsageError('--all rebuilds every board: leave --board out');
        const buckets = await liveBucketsWithScores(parts);
        const started = performance.now();
        let players = 0;
        // One at a time, most wanted first (ALL_TIME, then the open seasons, then the newest calendar buckets).
        for (const at of buckets) {
          const size = await rebuildBucket(parts, at);
          players += size;
          out(`rebuilt ${bucketKey(at)}: ${size} players`);
        }
        out(`rebuilt ${buckets.length} buckets (${players} rankings) in ${((performance.now() - started) / 1000).toFixed(2)} s`);
        return;
      }
      const period = stringOption(values, 'period', true);
      if (!(PERIODS as readonly string[]).includes(period)) throw new UsageError(`--period must be one of ${PERIODS.join(', ')}`);
      const at = await resolveBoardBucket(parts, {
        board: stringOption(values, 'board', true),
        period: period as Period,
        bucket: stringOption(values, 'bucket'),
        region: stringOption(values, 'region'),
      });
      const started = performance.now();
      const size = await rebuildBucket(parts, at);
      const seconds = (performance.now() - started) / 1000;
      out(`rebuilt ${bucketKey(at)}: ${size} players ranked in ${seconds.toFixed(2)} s`);
    },
  },
  export: {
    usage:
      'export --board ID [--period ALL_TIME|SEASON|MONTHLY|WEEKLY|DAILY] [--bucket LABEL] [--region REGION] [--format csv|ndjson] [--rank-style ORDINAL|COMPETITION|DENSE]',
    summary:
      "Writes a bucket's whole standings to standard output in rank order, as GET /export serves them (docs/export.md): CSV by default, or NDJSON; the open bucket when --bucket is left out. Says on standard error the instant of the snapshot, or that the bucket is closed.",
    options: {
      board: { type: 'string' },
      period: { type: 'string' },
      bucket: { type: 'string' },
      region: { type: 'string' },
      format: { type: 'string' },
      'rank-style': { type: 'string' },
    },
    async run(values, parts) {
      const prepared = await prepareExport(parts, {
        board: stringOption(values, 'board', true),
        period: stringOption(values, 'period'),
        bucket: stringOption(values, 'bucket'),
        region: stringOption(values, 'region'),
        format: stringOption(values, 'format'),
        rankStyle: stringOption(values, 'rank-style'),
      });
      let said = '';
      const rows = await runExport(parts, prepared, {
        opened: ({ at, closedAt }) => void (said = closedAt ? `closed at ${closedAt.toISOString()}: its final standings` : `a snapshot at ${at.toISOString()}`),
        write: (text) => writeOut(text),
      });
      process.stderr.write(
        `exported ${rows} standings of ${prepared.boardId} ${prepared.period} ${prepared.bucket}${prepared.region ? ` ${prepared.region}` : ''}, ${said}\n`,
      );
    },
  },
  'partitions list': {
    usage: 'partitions list',
    summary: "Lists the score log's monthly partitions with their estimated rows (the default partition's counted).",
    options: {},
    async run(_values, parts, out) {
      for (const partition of await parts.storage.results.partitions.list()) {
        out(`${partition.name}\t${partition.month ?? 'default'}\t${partition.rows === null ? 'rows unknown' : `${Math.round(partition.rows)} rows`}`);
      }
    },
  },
  'partitions create': {
    usage: 'partitions create --month YYYY-MM',
    summary: "Creates a month's partition of the score log now (the service keeps the coming months ready by itself).",
    options: { month: { type: 'string' } },
    async run(values, parts, out) {
      const month = monthOption(values);
      const done = await parts.storage.results.partitions.create(month);
      out(
        `${partitionName(month)}: ${done === 'archived' ? 'the month was detached for archiving; left alone (its late results go to the default partition)' : done}`,
      );
    },
  },
  'partitions detach': {
    usage: 'partitions detach --month YYYY-MM',
    summary: "Detaches a past month's partition from the score log for archiving, once no kept bucket reads it; the table stays (dump it, then drop it).",
    options: { month: { type: 'string' } },
    async run(values, parts, out) {
      const name = await detachMonth(parts, monthOption(values));
      out(`detached ${name}; archive it with: pg_dump --table=${name} "$DATABASE_URL" > ${name}.sql, then drop table ${name}`);
    },
  },
};

/** Writes to standard output, waiting while it is full (a slow pipe holds the export, not the process's memory). */
async function writeOut(text: string): Promise<void> {
  if (process.stdout.write(text)) return;
  await new Promise<void>((resolve, reject) => {
    const drained = () => {
      process.stdout.off('error', failed);
      resolve();
    };
    const failed = (error: Error) => {
      process.stdout.off('drain', drained);
      reject(error);
    };
    process.stdout.once('drain', drained).once('error', failed);
  });
}

function monthOption(values: Values): string {
  const month = stringOption(values, 'month', true);
  if (!isMonthLabel(month)) throw new UsageError('--month must be a month, YYYY-MM');
  return month;
}

function help(): string {
  const lines = Object.values(commands).map((command) => `  ${command.usage}\n      ${command.summary}`);
  return `usage: npm run cli -- <command> [options]\n\ncommands:\n${lines.join('\n')}\n  help\n      Shows this.\n`;
}

/** The parts the commands work with, built from the environment as the server builds its own. */
async function openParts(config: Config): Promise<{ parts: CliParts; close(): Promise<void> }> {
  // An operator's command (a rebuild of every bucket, say) may rightly run long: no session timeouts.
  const database = createDatabase(config.DATABASE_URL, { maxConnections: 2, timeouts: null, pooling: config.DATABASE_POOLING });
  const redis = createRedisClient(redisTarget(config), { keyPrefix: config.REDIS_KEY_PREFIX });
  await redis.connect();
  const storage = createStorage(database);
  const parts: CliParts = {
    storage,
    index: guardReads(createRankingIndex(redis), createIndexGeneration(redis)),
    boards: createBoardDirectory(storage.boards),
    seasons: createSeasonDirectory(storage.seasons, redis),
    keyring: { forget: () => undefined },
    now: () => new Date(),
    log: createLogger(config.LOG_LEVEL),
  };
  return {
    parts,
    async close() {
      await database.close();
      await redis.quit();
    },
  };
}

/** Runs one command; answers the process's exit code. */
async function main(argv: string[]): Promise<number> {
  // Commands are one word (rebuild) or two (keys create).
  const twoWords = argv.length >= 2 ? `${argv[0]} ${argv[1]}` : undefined;
  const name = twoWords && twoWords in commands ? twoWords : argv[0];
  const args = argv.slice(name?.split(' ').length ?? 0);
  if (name === undefined || name === 'help' || name === '--help') {
    process.stdout.write(help());
    return name === undefined ? 2 : 0;
  }
  const command = commands[name];
  if (!command) {
    process.stderr.write(`unknown command "${name}"\n\n${help()}`);
    return 2;
  }
  let opened: Awaited<ReturnType<typeof openParts>> | undefined;
  try {
    const { values } = parseArgs({ args, options: command.options, strict: true, allowPositionals: false });
    opened = await openParts(loadConfig());
    await command.run(values, opened.parts, (line) => process.stdout.write(`${line}\n`));
    return 0;
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`${(error as Error).message}\n\nusage: npm run cli -- ${command.usage}\n`);
      return 2;
    }
    // Refusals the API would answer with a code (no such board, a malformed bucket) are the
    // operator's to fix: the message alone says what is wrong. By name, not instanceof: graphql
    // may be loaded twice (its CommonJS and ESM builds) under a loader.
    const refused = error instanceof Error && error.name === 'GraphQLError';
    if (error instanceof ConfigError || refused || error instanceof RebuildRunningError || error instanceof PartitionError || error instanceof ExportRefusal) {
      process.stderr.write(`${error.message}\n`);
      return 1;
    }
    throw error;
  } finally {
    await opened?.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
