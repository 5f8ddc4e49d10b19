import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

describe('configuration from the environment', () => {
  it('has the documented defaults', () => {
    expect(loadConfig({})).toMatchObject({
      PORT: 4000,
      HOST: '127.0.0.1',
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/leaderboard',
      REDIS_URL: 'redis://127.0.0.1:6379',
      SERVER_API_KEYS: [],
    });
  });

  it('lists every bad variable at once', () => {
    let error: unknown;
    try {
      loadConfig({
        PORT: 'eighty',
        DATABASE_URL: 'mysql://x',
        REDIS_URL: 'nope',
        ADMIN_API_KEY: 'short',
        SERVER_API_KEYS: 'a-long-enough-key-1,tiny',
        LOG_LEVEL: 'loud',
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of ['PORT', 'DATABASE_URL', 'REDIS_URL', 'ADMIN_API_KEY', 'SERVER_API_KEYS', 'LOG_LEVEL']) expect(problems).toContain(name);
  });

  it('takes a DATABASE_URL naming several hosts, each checked, and refuses garbage', () => {
    for (const url of [
      'postgres://h1:5432,h2:5433/db?target_session_attrs=read-write',
      'postgresql://user:p%40ss@db-a.internal,db-b.internal:6432/leaderboard?target_session_attrs=primary&sslmode=require',
      'postgres://postgres@127.0.0.1:5432,[::1]:5433/leaderboard',
      'postgres://postgres@127.0.0.1:5432/leaderboard?target_session_attrs=read-write',
    ])
      expect(loadConfig({ DATABASE_URL: url }).DATABASE_URL).toBe(url);
    const refused = (url: string) => {
      try {
        loadConfig({ DATABASE_URL: url });
      } catch (error) {
        return (error as ConfigError).problems.join('\n');
      }
      return 'accepted';
    };
    expect(refused('mysql://h1:3306,h2:3306/db')).toMatch(/DATABASE_URL.*must be a postgres:\/\/ URL/);
    expect(refused('postgres://h1:5432,/db')).toMatch(/DATABASE_URL.*"" in its host list is not host or host:port/);
    expect(refused('postgres://h1:5432,h2:port/db')).toMatch(/DATABASE_URL.*"h2:port"/);
    expect(refused('postgres://h1:5432,h2:70000/db')).toMatch(/DATABASE_URL.*the port of "h2:70000" is not between 1 and 65535/);
    expect(refused('postgres://h1:5432,h 2:5433/db')).toMatch(/DATABASE_URL.*"h 2:5433"/);
    expect(refused('postgres://h1:5432,h2:0/db')).toMatch(/DATABASE_URL.*between 1 and 65535/);
    expect(refused('postgres://h1,h2/db?target_session_attrs=standby')).toMatch(/DATABASE_URL.*target_session_attrs must be read-write or primary/);
    expect(refused('postgres://h1/db?target_session_attrs=any')).toMatch(/DATABASE_URL.*target_session_attrs/);
    expect(refused('not a url')).toMatch(/DATABASE_URL.*must be a postgres:\/\/ URL/);
  });

  it('reads the rate limits, 0 turning one off, and refuses a negative one', () => {
    expect(loadConfig({})).toMatchObject({ RATE_LIMIT_SUBMISSIONS_PER_SECOND: 20_000, RATE_LIMIT_READS_PER_SECOND: 200 });
    expect(loadConfig({ RATE_LIMIT_SUBMISSIONS_PER_SECOND: '0', RATE_LIMIT_READS_PER_SECOND: '50' })).toMatchObject({
      RATE_LIMIT_SUBMISSIONS_PER_SECOND: 0,
      RATE_LIMIT_READS_PER_SECOND: 50,
    });
    expect(() => loadConfig({ RATE_LIMIT_READS_PER_SECOND: '-1' })).toThrow(/RATE_LIMIT_READS_PER_SECOND/);
  });

  it('has the documented request limits, each tunable', () => {
    expect(loadConfig({})).toMatchObject({
      RATE_LIMIT_READ_ROWS_PER_SECOND: 10_000,
      RATE_LIMIT_AUTH_FAILURES_PER_SECOND: 5,
      MAX_OPERATION_ROWS: 5_000,
      MAX_DOCUMENT_BYTES: 100_000,
      SUBSCRIPTIONS_PER_CLIENT: 1_000,
      SUBSCRIPTIONS_PER_SOCKET: 100,
      WS_OPERATIONS_PER_SOCKET: 32,
      WS_MAX_BUFFERED_BYTES: 4_194_304,
      HTTP_REQUEST_TIMEOUT_MS: 10_000,
      MAX_CONNECTIONS: 10_000,
      MAX_BODY_BYTES_IN_FLIGHT: 268_435_456,
      MAX_BODY_BYTES_IN_FLIGHT_PER_CLIENT: 33_554_432,
      MAX_CONNECTIONS_PER_CLIENT: 1_000,
      HTTP_KEEP_ALIVE_TIMEOUT_MS: 5_000,
    });
    expect(loadConfig({ MAX_OPERATION_ROWS: '20000', SUBSCRIPTIONS_PER_SOCKET: '5' })).toMatchObject({
      MAX_OPERATION_ROWS: 20_000,
      SUBSCRIPTIONS_PER_SOCKET: 5,
    });
    expect(() => loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '10', MAX_CONNECTIONS: '0' })).toThrow(/HTTP_REQUEST_TIMEOUT_MS[\s\S]*MAX_CONNECTIONS/);
    // Below the largest body one request may have, no large request could ever be read.
    expect(() => loadConfig({ MAX_BODY_BYTES_IN_FLIGHT: '1000000' })).toThrow(/MAX_BODY_BYTES_IN_FLIGHT/);
    expect(() => loadConfig({ MAX_BODY_BYTES_IN_FLIGHT_PER_CLIENT: '1000000' })).toThrow(/MAX_BODY_BYTES_IN_FLIGHT_PER_CLIENT/);
    // 0 would turn Node's keep-alive timeout off.
    expect(() => loadConfig({ MAX_CONNECTIONS_PER_CLIENT: '0', HTTP_KEEP_ALIVE_TIMEOUT_MS: '0' })).toThrow(
      /MAX_CONNECTIONS_PER_CLIENT[\s\S]*HTTP_KEEP_ALIVE_TIMEOUT_MS/,
    );
  });

  it('reads comma-separated server keys, and treats empty as unset', () => {
    const config = loadConfig({ SERVER_API_KEYS: ' key-number-one-0001 , key-number-two-0002 ', ADMIN_API_KEY: '' });
    expect(config.SERVER_API_KEYS).toEqual(['key-number-one-0001', 'key-number-two-0002']);
    expect(config.ADMIN_API_KEY).toBeUndefined();
  });
});
