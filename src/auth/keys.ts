import { createHash, timingSafeEqual } from 'node:crypto';

export type Role = 'admin' | 'server';

/** Who is calling: the role their key grants. Anonymous callers have no Caller. */
export interface Caller {
  role: Role;
  /** Names the key without revealing it (a digest prefix): for per-key limits and logs. */
  keyId: string;
}

export interface KeyringOptions {
  /** The admin key; none when unset. */
  adminKey?: string | undefined;
  /** Game-server keys. Default: none. */
  serverKeys?: readonly string[];
}

const digest = (key: string) => createHash('sha256').update(key, 'utf8').digest();

/**
 * The API keys the environment grants. Keys are kept and compared as SHA-256 digests with
 * timingSafeEqual, so neither a key's length nor its matching prefix shows in the time taken;
 * every known key is compared on every lookup for the same reason.
 */
export function createKeyring({ adminKey, serverKeys = [] }: KeyringOptions) {
  const known: { digest: Buffer; role: Role }[] = [
    ...(adminKey ? [{ digest: digest(adminKey), role: 'admin' as const }] : []),
    ...serverKeys.map((key) => ({ digest: digest(key), role: 'server' as const })),
  ];
  return {
    /** The caller a key belongs to, or null for an unknown key. O(number of keys). */
    identify(key: string): Caller | null {
      const presented = digest(key);
      let role: Role | null = null;
      for (const entry of known) {
        if (timingSafeEqual(entry.digest, presented) && role !== 'admin') role = entry.role;
      }
      return role ? { role, keyId: presented.toString('hex', 0, 8) } : null;
    },
  };
}

export type Keyring = ReturnType<typeof createKeyring>;

/** The key of an `Authorization: Bearer <key>` header; undefined when there is none, '' when it is malformed. */
export function bearerKey(header: string | null | undefined): string | undefined {
  if (header === null || header === undefined || header === '') return undefined;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? '';
}
