import { randomBytes } from 'node:crypto';
import { type Role, digestOf, newApiKey } from '../auth/keys.js';
import { type StoredKey } from '../db/api-keys.js';
import type { Storage } from '../db/storage.js';
import type { Keyring } from '../auth/keys.js';
import type { BoardDirectory } from '../services/board-directory.js';
import { badInput } from '../errors.js';
import { MAX_KEY_BOARDS } from '../model/contract.js';

/** What the key operations take: the stored keys, this process's keyring to forget a revoked one, and the boards a key may be scoped to. */
export interface ApiKeyDeps {
  storage: Pick<Storage, 'apiKeys'>;
  keyring: Pick<Keyring, 'forget'>;
  boards: Pick<BoardDirectory, 'find'>;
}

/** A key just made: the key itself, which exists nowhere else once this is answered, and its stored record. */

export interface IssuedKey {
  key: string;
  stored: StoredKey;
}

/**
 * The boards a new key is scoped to, checked: game-server keys only (an admin key administers every
 * board, so boards on it would promise a limit nothing keeps), each board existing (a scope naming a
 * board that does not exist yet would be a typo refusing every write to the one meant), none repeated,
 * at most MAX_KEY_BOARDS. BAD_USER_INPUT otherwise, as createWebhook's boards. One lookup a board,
 * from the directory's cache mostly.
 */
async function checkedScope(deps: Pick<ApiKeyDeps, 'boards'>, role: Role, boards: readonly string[]): Promise<string[]> {
  if (boards.length === 0) return [];
  if (role !== 'server') throw badInput('boards: only game-server keys (role SERVER) are scoped to boards; an admin key administers every board.');
  if (boards.length > MAX_KEY_BOARDS) throw badInput(`boards: a key is scoped to at most ${MAX_KEY_BOARDS} boards; this names ${boards.length}.`);
  if (new Set(boards).size !== boards.length) throw badInput('boards: must not repeat a board.');
  const found = await Promise.all(boards.map((id) => deps.boards.find(id)));
  const missing = boards.filter((_id, i) => !found[i]);
  if (missing.length > 0) throw badInput(`boards: no board has the id ${missing.map((id) => `"${id}"`).join(', ')}. Nothing was made.`);
  return [...boards];
}

/**
 * Makes an API key for a role (a game-server key maybe scoped to `boards`: see auth/board-scope.ts):
 * a random key, of which only the SHA-256 digest is stored; every process accepts it at once (see
 * listenForKeyChanges). The CLI's `keys create` and the console's createApiKey both come here.
 * O(boards).
 */
export async function issueApiKey(
  deps: Pick<ApiKeyDeps, 'storage' | 'boards'>,
  input: { name: string; role: Role; boards?: readonly string[] | undefined },
): Promise<IssuedKey> {
  const boards = await checkedScope(deps, input.role, input.boards ?? []);
  const key = newApiKey(input.role);
  const id = `key_${randomBytes(6).toString('hex')}`;
  const stored = await deps.storage.apiKeys.insert({
    id,
    name: input.name,
    role: input.role,
    digest: digestOf(key).toString('hex'),
    boards,
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
