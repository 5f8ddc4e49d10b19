import { randomBytes } from 'node:crypto';
import { type Role, digestOf, newApiKey } from '../auth/keys.js';
import { type StoredKey } from '../db/api-keys.js';
import type { Storage } from '../db/storage.js';
import type { Keyring } from '../auth/keys.js';

/** A key just made: the key itself, which exists nowhere else once this is answered, and its stored record. */
/** What the key operations take: the stored keys, and this process's keyring to forget a revoked one. */
export interface ApiKeyDeps {
  storage: Pick<Storage, 'apiKeys'>;
  keyring: Pick<Keyring, 'forget'>;
}

export interface IssuedKey {
  key: string;
  stored: StoredKey;
}

/**
 * Makes an API key for a role: a random key, of which only the SHA-256 digest is stored; every
 * process accepts it at once (see listenForKeyChanges). The CLI's `keys create` and the console's
 * createApiKey both come here. O(1).
 */
export async function issueApiKey(deps: Pick<ApiKeyDeps, 'storage'>, input: { name: string; role: Role }): Promise<IssuedKey> {
  const key = newApiKey(input.role);
  const id = `key_${randomBytes(6).toString('hex')}`;
  const stored = await deps.storage.apiKeys.insert({
    id,
    name: input.name,
    role: input.role,
    digest: digestOf(key).toString('hex'),
  });
  return { key, stored };
}

/** Every key made with the CLI or the console, oldest first, revoked ones included; never the keys themselves. */
export async function listApiKeys(deps: Pick<ApiKeyDeps, 'storage'>): Promise<StoredKey[]> {
  return deps.storage.apiKeys.list();
}

/**
 * Revokes the live keys with this id or name; answers them. This process refuses them from its
 * answer on; every other process once the change's notification reaches it (see listenForKeyChanges).
 */
export async function revokeApiKey(deps: ApiKeyDeps, idOrName: string): Promise<StoredKey[]> {
  const revoked = await deps.storage.apiKeys.revoke(idOrName);
  if (revoked.length > 0) deps.keyring.forget();
  return revoked;
}
