import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TcpProxy, startTcpProxy } from './helpers/tcp-proxy.js';
import { createTestStores } from './helpers/test-app.js';
import { until } from './helpers/wait.js';

/**
 * The PostgreSQL driver as patched (patches/postgres+3.4.9.patch, applied by `npm install`): a
 * transaction or a reserved connection that outlives its connection fails every query it still
 * has, at once, and sends none of them anywhere; BEGIN reserves its connection whatever the
 * pipeline holds; a terminated backend's FATAL error dies with its session. Each case hangs, or
 * runs a statement outside its transaction, on the unpatched postgres.js 3.4.9.
 */

/** Whether `promise` settles within `ms`: 'resolved', 'rejected', or 'pending'. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<'resolved' | 'rejected' | 'pending'> {
  let timer: NodeJS.Timeout | undefined;
  // Why a timer: it is the bound of a wait for the promise to settle, not a wait of its own.
  const pending = new Promise<'pending'>((resolve) => (timer = setTimeout(() => resolve('pending'), ms)));
  const settled = promise.then(
    () => 'resolved' as const,
    () => 'rejected' as const,
  );
  try {
    return await Promise.race([settled, pending]);
  } finally {
    clearTimeout(timer);
  }
}

const never = new Promise<never>(() => {});

describe('the patched postgres.js, with its connection cut under a transaction', () => {
  let stores: Awaited<ReturnType<typeof createTestStores>>;
  let proxy: TcpProxy;
  let direct: postgres.Sql;
  let viaProxy: postgres.Sql;

  beforeAll(async () => {
    stores = await createTestStores();
    proxy = await startTcpProxy({ port: 5432 });
    direct = postgres(stores.databaseUrl, { max: 1, onnotice: () => {} });
    await direct`create table driver_probe (n int)`;
    const url = new URL(stores.databaseUrl);
    url.port = String(proxy.port);
    viaProxy = postgres(url.toString(), { max: 1, onnotice: () => {}, backoff: () => 0.05 });
  });
  afterAll(async () => {
    await viaProxy?.end({ timeout: 1 });
    await direct?.end();
    await proxy?.close();
    await stores?.drop();
  });

  it('a statement a transaction sends after its connection closed fails at once and runs nowhere', async () => {
    let tx!: postgres.TransactionSql;
    let ready!: () => void;
    const started = new Promise<void>((resolve) => (ready = resolve));
    const transaction = viaProxy.begin(async (t) => {
      tx = t;
      await t`select 1`;
      ready();
      return never;
    });
    await started;
    proxy.cut();
    expect(await settlesWithin(transaction, 2_000)).toBe('rejected');
    await proxy.restore();

    // The pool's only connection is opened again for other work; the stale transaction's insert must not ride on it.
    const stale = tx`insert into driver_probe values (1)`;
    expect(await settlesWithin(stale, 2_000)).toBe('rejected');
    expect(await settlesWithin(viaProxy`select 1`, 5_000)).toBe('resolved');
    expect((await direct<{ n: number }[]>`select count(*)::int as n from driver_probe`)[0]!.n).toBe(0);
  });

  it('a statement queued inside a transaction (behind one still running) settles when the connection is cut', async () => {
    let queued!: Promise<unknown>;
    let running!: Promise<unknown>;
    const transaction = viaProxy.begin(async (t) => {
      // A statement with parameters is described before it runs, so the next one waits in the transaction's own queue.
      running = t`select pg_sleep(5), ${1}::int as one`;
      queued = t`insert into driver_probe values (${2}::int)`;
      running.catch(() => {});
      queued.catch(() => {});
      return Promise.all([running, queued]);
    });
    // Cut while the first runs in PostgreSQL (it sleeps long enough to be seen), the second queued behind it.
    await until(
      async () =>
        (
          await direct<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity
          where datname = current_database() and state = 'active' and query like 'select pg_sleep(5)%'`
        )[0]!.n === 1,
      4_000,
      'the first statement running',
      10,
    );
    proxy.cut();
    const settled = await Promise.all([settlesWithin(transaction, 2_000), settlesWithin(running, 2_000), settlesWithin(queued, 2_000)]);
    expect(settled).toEqual(['rejected', 'rejected', 'rejected']);
    await proxy.restore();
    expect(await settlesWithin(viaProxy`select 1`, 5_000)).toBe('resolved');
    expect((await direct<{ n: number }[]>`select count(*)::int as n from driver_probe`)[0]!.n).toBe(0);
  });

  it('a reserved connection that closed fails its statements, and releasing it hands out no dead connection', async () => {
    const reserved = await viaProxy.reserve();
    await reserved`select 1`;
    proxy.cut();
    await proxy.restore();
    expect(await settlesWithin(reserved`insert into driver_probe values (3)`, 2_000)).toBe('rejected');
    reserved.release();
    expect(await settlesWithin(viaProxy`select 1`, 5_000)).toBe('resolved');
    expect((await direct<{ n: number }[]>`select count(*)::int as n from driver_probe`)[0]!.n).toBe(0);
  });

  it('a reserved connection whose backend was terminated (FATAL, then the close), released: the pool of one serves the next reserve and statement', async () => {
    // What a PostgreSQL restart or pg_terminate_backend sends: the FATAL's error came to the next
    // session's first answer, failing the reserve waiting on it, whose connection was then lost.
    const reserved = await viaProxy.reserve();
    const pid = (await reserved<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]!.pid;
    const sleeping = reserved`select pg_sleep(30)`.execute();
    sleeping.catch(() => undefined);
    await until(async () => (await direct`select 1 from pg_stat_activity where pid = ${pid} and state = 'active'`).length === 1, 5_000, 'the sleep running');
    await direct`select pg_terminate_backend(${pid})`;
    expect(await settlesWithin(sleeping, 5_000)).toBe('rejected');
    reserved.release();
    const next = viaProxy.reserve();
    expect(await settlesWithin(next, 5_000)).toBe('resolved');
    const again = await next;
    expect(await again<{ n: number }[]>`select 2::int as n`).toEqual([{ n: 2 }]);
    again.release();
    expect(await settlesWithin(viaProxy`select 1`, 5_000)).toBe('resolved');
  });

  it('BEGIN reserves its connection even when the pipeline has no room (max_pipeline 0)', async () => {
    // max_pipeline is a postgres.js option its types leave out.
    const strict = postgres(stores.databaseUrl, { max: 2, max_pipeline: 0, onnotice: () => {} } as postgres.Options<Record<string, never>>);
    try {
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) => strict.begin(async (t) => (await t<{ n: number }[]>`select ${i}::int as n`)[0]!.n)),
      );
      expect(answers).toEqual([0, 1, 2, 3, 4, 5]);
    } finally {
      await strict.end({ timeout: 1 });
    }
  });
});
