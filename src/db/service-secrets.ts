import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Db } from './client.js';
import { serviceSecrets } from './schema.js';

/** A secret was needed before PostgreSQL answered the process's first request for it. Reaches the client as UNAVAILABLE. */
export class SecretNotLoadedError extends Error {
  constructor(readonly secret: string) {
    super(`the ${secret} secret has not been read from PostgreSQL yet (it was away when this process started)`);
    this.name = 'SecretNotLoadedError';
  }
}

/**
 * The deployment's secret called `name`: made (32 random bytes) by the first process that asks,
 * read by every other, so processes that share the database share it. Two processes asking at once
 * agree: the second insert does nothing, and both read the first's.
 */
export async function sharedSecret(db: Db, name: string): Promise<string> {
  await db
    .insert(serviceSecrets)
    .values({ name, value: randomBytes(32).toString('base64url') })
    .onConflictDoNothing();
  const [row] = await db.select({ value: serviceSecrets.value }).from(serviceSecrets).where(eq(serviceSecrets.name, name));
  if (!row) throw new Error(`the service secret ${name} could not be read back`);
  return row.value;
}
