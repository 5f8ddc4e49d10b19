import { z } from 'zod';
import { DEFAULT_REQUEST_LIMITS, MAX_BODY_BYTES } from './http/request-limits.js';
import type { RedisTarget } from './redis.js';
import { isAddressOrRange } from './http/client-address.js';
import { isOrigin } from './http/cors.js';
import { PostgresUrlError, parsePostgresUrl } from './db/postgres-url.js';

/** A comma-separated list, blanks dropped. */
const commaList = z
  .string()
  .optional()
  .transform((raw) =>
    (raw ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0),
  );

const apiKeyList = commaList.pipe(z.array(z.string().min(16, 'each key must be at least 16 characters long')));

/** A postgres:// URL of one host or several (`h1:5432,h2:5433`, see db/postgres-url.ts), each host checked. */
const postgresUrl = z.string().superRefine((value, context) => {
  try {
    parsePostgresUrl(value);
  } catch (error) {
    context.addIssue({ code: 'custom', message: error instanceof PostgresUrlError ? error.message : 'must be a postgres:// URL' });
  }
});

const redisUrl = z.string().refine((value) => URL.canParse(value) && /^rediss?:$/.test(new URL(value).protocol), {
  message: 'must be a redis:// or rediss:// URL',
});

const clusterNode = /^([^\s:,]+):(\d{1,5})$/;

/**
 * `host:port,host:port,...`: seed nodes of a Redis Cluster (a few are enough; the client learns the
 * rest from them), parsed into addresses.
 */
const clusterNodes = z
  .string()
  .transform((raw) =>
    raw
      .split(',')
      .map((node) => node.trim())
      .filter((node) => node.length > 0),
  )
  .pipe(
    z
      .array(
        z.string().refine((node) => {
          const port = Number(clusterNode.exec(node)?.[2] ?? 0);
          return port >= 1 && port <= 65535;
        }, 'each node must be host:port, with a port from 1 to 65535'),
      )
      .min(1, 'must list at least one host:port'),
  )
  .transform((nodes) =>
    nodes.map((node) => {
      const [, host, port] = clusterNode.exec(node)!;
      return { host: host!, port: Number(port) };
    }),
  );

/** A switch: `true`/`false` (or `1`/`0`, `yes`/`no`, `on`/`off`). */
const flag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'], { message: 'must be true or false' })
    .transform((value) => ['true', '1', 'yes', 'on'].includes(value))
    .default(fallback);

/**
 * Everything the service reads from its environment, parsed once at start-up.
 * The table in the README is the operator's view of this schema.
 */
export const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: postgresUrl.default('postgres://postgres@127.0.0.1:5432/leaderboard'),
  /**
   * How DATABASE_URL's connections reach PostgreSQL: `session` (directly, or a pooler in session
   * mode) or `transaction` (PgBouncer's pool_mode = transaction: no prepared statements, startup
   * parameters or session state; see db/client.ts Pooling).
   */
  DATABASE_POOLING: z.enum(['session', 'transaction'], { message: 'must be session or transaction' }).default('session'),
  REDIS_URL: redisUrl.default('redis://127.0.0.1:6379'),
  /** Seed nodes of a Redis Cluster; when set, the service uses the cluster and REDIS_URL is not read. */
  REDIS_CLUSTER_NODES: clusterNodes.optional(),
  /**
   * Replicas of the REDIS_URL node (`redis://h:p,redis://h2:p`): the reads that may be a little
   * stale go to them while they keep up (see ranking/replicas.ts). Not read on a Cluster, whose
   * replicas REDIS_CLUSTER_REPLICA_READS turns on.
   */
  REDIS_REPLICA_URLS: commaList.pipe(z.array(redisUrl)),
  /** On a Cluster (REDIS_CLUSTER_NODES): whether those reads go to each master's replicas. */
  REDIS_CLUSTER_REPLICA_READS: flag(false),
  /** A replica whose heartbeat is older than this many milliseconds is skipped until it catches up. */
  REDIS_REPLICA_MAX_LAG_MS: z.coerce.number().int().min(1).default(1_000),
  REDIS_KEY_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_:.-]*$/, 'may hold only letters, digits and _ : . -')
    .default(''),
  ADMIN_API_KEY: z.string().min(16, 'must be at least 16 characters long').optional(),
  SERVER_API_KEYS: apiKeyList,
  CURSOR_SECRET: z.string().min(16, 'must be at least 16 characters long').optional(),
  /** When set, /metrics answers only `Authorization: Bearer <METRICS_TOKEN>`. */
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters long').optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).default(10_000),
  /**
   * Every query and mutation is answered within this many milliseconds, whatever PostgreSQL or the
   * network does (UNAVAILABLE past it); PostgreSQL's statement, lock and idle-in-transaction
   * timeouts on the service's sessions are derived from it (see sessionTimeoutsFor).
   */
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(600_000).default(10_000),
  /**
   * How long after a bucket closes (its end plus its board's closeGraceSeconds) it is frozen: every
   * write that chose its buckets before the close has committed by then (see docs/closing.md).
   * Default: REQUEST_TIMEOUT_MS + 5,000, a little above the longest a write can take.
   */
  BUCKET_CLOSE_SETTLE_MS: z.coerce.number().int().min(0).max(3_600_000).optional(),
  /**
   * How old the last measurement of the index drift (`leaderboard_index_drift`) may be before a
   * scrape of /metrics starts the next, in the background; one process of the deployment measures
   * at a time, and a measurement also waits ten times the last one's length.
   */
  INDEX_DRIFT_INTERVAL_MS: z.coerce.number().int().min(0).default(60_000),
  /** Results a second one API key may submit; 0 turns the limit off (a benchmark does). */
  RATE_LIMIT_SUBMISSIONS_PER_SECOND: z.coerce.number().int().min(0).default(20_000),
  /** Read operations a second one client address may make; 0 turns the limit off. */
  RATE_LIMIT_READS_PER_SECOND: z.coerce.number().int().min(0).default(200),
  /** Rows a second one client address may be sent by reads: each read is checked against the rows it can return, and charged the rows it returned; 0 turns the limit off. */
  RATE_LIMIT_READ_ROWS_PER_SECOND: z.coerce.number().int().min(0).default(10_000),
  /** Authentications with an unknown key a second one client address may make before further ones are refused unlooked-up; 0 turns the limit off. */
  RATE_LIMIT_AUTH_FAILURES_PER_SECOND: z.coerce.number().int().min(0).default(5),
  /** Milliseconds a second the service may spend validating one client address's new documents; 0 turns the limit off. */
  RATE_LIMIT_VALIDATION_MS_PER_SECOND: z.coerce.number().int().min(0).default(100),
  /** The most rows one query or subscription may return (lists at their requested size, aliases each counted). */
  MAX_OPERATION_ROWS: z.coerce.number().int().min(1).default(DEFAULT_REQUEST_LIMITS.maxOperationRows),
  /** Bytes one GraphQL document (the query text) may have. */
  MAX_DOCUMENT_BYTES: z.coerce.number().int().min(1_000).default(DEFAULT_REQUEST_LIMITS.maxDocumentBytes),
  /** topChanged subscriptions one client address may hold open in one process, over every socket and event stream. */
  SUBSCRIPTIONS_PER_CLIENT: z.coerce.number().int().min(1).default(DEFAULT_REQUEST_LIMITS.subscriptionsPerClient),
  /** Subscriptions one WebSocket may hold open. */
  SUBSCRIPTIONS_PER_SOCKET: z.coerce.number().int().min(1).default(DEFAULT_REQUEST_LIMITS.subscriptionsPerSocket),
  /** Queries and mutations one WebSocket may have running or waiting to be sent. */
  WS_OPERATIONS_PER_SOCKET: z.coerce.number().int().min(1).default(DEFAULT_REQUEST_LIMITS.operationsPerSocket),
  /** Bytes of answers a WebSocket may leave unread before it is closed. */
  WS_MAX_BUFFERED_BYTES: z.coerce.number().int().min(65_536).default(DEFAULT_REQUEST_LIMITS.maxSocketBufferedBytes),
  /** How long a client may take to send a whole HTTP request, headers and body. */
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1_000).default(DEFAULT_REQUEST_LIMITS.requestTimeoutMs),
  /** Connections (HTTP and WebSocket) one process holds at once. */
  MAX_CONNECTIONS: z.coerce.number().int().min(1).default(DEFAULT_REQUEST_LIMITS.maxConnections),
  /** Bytes of HTTP request bodies one process holds at once (declared lengths of the requests not answered yet); past it, 503. */
  MAX_BODY_BYTES_IN_FLIGHT: z.coerce.number().int().min(MAX_BODY_BYTES).default(DEFAULT_REQUEST_LIMITS.maxBodyBytesInFlight),
  /** The share of MAX_BODY_BYTES_IN_FLIGHT one client address may hold; past it, 429. */
  MAX_BODY_BYTES_IN_FLIGHT_PER_CLIENT: z.coerce.number().int().min(MAX_BODY_BYTES).default(DEFAULT_REQUEST_LIMITS.maxBodyBytesInFlightPerClient),
  /** Connections (HTTP and WebSocket) one peer address may hold open in one process; trusted proxies are not counted. */
  MAX_CONNECTIONS_PER_CLIENT: z.coerce.number().int().min(1).default(DEFAULT_REQUEST_LIMITS.maxConnectionsPerClient),
  /** How long an HTTP connection may stay open with no request after its last answer. */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(1_000).default(DEFAULT_REQUEST_LIMITS.keepAliveTimeoutMs),
  /**
   * API processes sharing the port (node:cluster, see src/workers.ts). 1 runs the app in this
   * process, with no primary; more runs a primary that forks and supervises that many.
   */
  WORKERS: z.coerce.number().int().min(1).max(256).default(1),
  /**
   * The proxies (addresses or CIDR ranges) whose X-Forwarded-For / Forwarded is believed: a request
   * from one of them counts against the rightmost address in that header that is not a trusted proxy.
   */
  TRUSTED_PROXIES: commaList.pipe(
    z.array(z.string().refine(isAddressOrRange, 'each entry must be an IP address or a CIDR range such as 10.0.0.0/8 or fd00::/8')),
  ),
  /** Which web pages may call the API from a browser: `*` (any, without credentials) or origins such as `https://game.example`. */
  CORS_ORIGINS: commaList
    .pipe(
      z.array(
        z
          .string()
          .refine(
            (origin) => origin === '*' || isOrigin(origin),
            'each entry must be * or an origin such as https://game.example (scheme, host and port; no path)',
          ),
      ),
    )
    .transform((origins) => (origins.length === 0 || origins.includes('*') ? ('*' as const) : origins)),
  /** Whether `/graphql` serves GraphiQL to a browser. */
  GRAPHIQL: flag(true),
  /** Whether the schema may be introspected (`__schema`, `__type`); GraphiQL and code generators need it. */
  INTROSPECTION: flag(true),
  /** Whether only the typed client's registered documents run (trusted documents): a query sent as text is refused. */
  PERSISTED_DOCUMENTS_ONLY: flag(false),
  /**
   * Whether a webhook may be sent over http to a loopback or private address (a receiver on the
   * same host or network, in development). Off: only https to public addresses, checked at creation
   * and again when the name resolves at each delivery.
   */
  WEBHOOK_ALLOW_PRIVATE: flag(false),
});

export type Config = z.output<typeof configSchema>;

/** Thrown with every problem of the environment at once, so an operator fixes them in one go. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parses the environment once; throws a {@link ConfigError} listing every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable means "unset" to an operator, not "the empty string".
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const parsed = configSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.') || '(environment)'}: ${issue.message}`));
  }
  return parsed.data;
}

/** Where the index lives: the Redis Cluster when REDIS_CLUSTER_NODES is set, else the node at REDIS_URL. */
export function redisTarget(config: Pick<Config, 'REDIS_URL' | 'REDIS_CLUSTER_NODES'>): RedisTarget {
  return config.REDIS_CLUSTER_NODES ? { cluster: config.REDIS_CLUSTER_NODES } : config.REDIS_URL;
}

/**
 * Where the reads that may be a little stale go: the Cluster's replicas when REDIS_CLUSTER_NODES and
 * REDIS_CLUSTER_REPLICA_READS are set, else the nodes REDIS_REPLICA_URLS lists; null for none.
 */
export function redisReplicas(
  config: Pick<Config, 'REDIS_CLUSTER_NODES' | 'REDIS_CLUSTER_REPLICA_READS' | 'REDIS_REPLICA_URLS'>,
): { urls: string[] } | Exclude<RedisTarget, string> | null {
  if (config.REDIS_CLUSTER_NODES) return config.REDIS_CLUSTER_REPLICA_READS ? { cluster: config.REDIS_CLUSTER_NODES } : null;
  return config.REDIS_REPLICA_URLS.length > 0 ? { urls: config.REDIS_REPLICA_URLS } : null;
}
