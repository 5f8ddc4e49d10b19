import { z } from 'zod';

/**
 * Everything the service reads from its environment, parsed once at start-up.
 * The table in the README is the operator's view of this schema.
 */
const apiKeyList = z
  .string()
  .optional()
  .transform((raw) =>
    (raw ?? '')
      .split(',')
      .map((key) => key.trim())
      .filter((key) => key.length > 0),
  )
  .pipe(z.array(z.string().min(16, 'each key must be at least 16 characters long')));

const postgresUrl = z
  .string()
  .refine((value) => URL.canParse(value) && /^postgres(ql)?:$/.test(new URL(value).protocol), {
    message: 'must be a postgres:// URL',
  });

const redisUrl = z
  .string()
  .refine((value) => URL.canParse(value) && /^rediss?:$/.test(new URL(value).protocol), {
    message: 'must be a redis:// or rediss:// URL',
  });

export const configSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: postgresUrl.default('postgres://postgres@127.0.0.1:5432/leaderboard'),
  REDIS_URL: redisUrl.default('redis://127.0.0.1:6379'),
  REDIS_KEY_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_:.-]*$/, 'may hold only letters, digits and _ : . -')
    .default(''),
  ADMIN_API_KEY: z.string().min(16, 'must be at least 16 characters long').optional(),
  SERVER_API_KEYS: apiKeyList,
  CURSOR_SECRET: z.string().min(16, 'must be at least 16 characters long').optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).default(10_000),
  /** Results a second one API key may submit; 0 turns the limit off (a benchmark does). */
  RATE_LIMIT_SUBMISSIONS_PER_SECOND: z.coerce.number().int().min(0).default(20_000),
  /** Read operations a second one client address may make; 0 turns the limit off. */
  RATE_LIMIT_READS_PER_SECOND: z.coerce.number().int().min(0).default(200),
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
    throw new ConfigError(
      parsed.error.issues.map((issue) => `${issue.path.join('.') || '(environment)'}: ${issue.message}`),
    );
  }
  return parsed.data;
}
