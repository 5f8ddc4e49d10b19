import type { Storage } from '../db/storage.js';
import type { IndexGeneration, IndexState } from '../ranking/generation.js';
import type { StoreProbes } from '../services/store-health.js';

/** What the console's store health shows. */
export interface StoreStatus extends StoreProbes {
  /** Whether this process trusts the index (see ranking/generation.ts). */
  index: IndexState;
  /** Committed results the index has not applied yet (counted up to 100,000), or null when PostgreSQL does not answer. */
  indexBacklog: number | null;
}

/** What the store health takes: the probes, the outbox, and this process's view of the index. */
export interface StoreStatusDeps {
  probeStores(): Promise<StoreProbes>;
  storage: Pick<Storage, 'backlog'>;
  indexGeneration: Pick<IndexGeneration, 'state'>;
}

/** Both stores probed at once (each within a second), this process's view of the index, and the outbox's length. */
export async function storeStatus(deps: StoreStatusDeps): Promise<StoreStatus> {
  const probes = await deps.probeStores();
  const indexBacklog = probes.postgres.up ? await deps.storage.backlog.count().catch(() => null) : null;
  return { ...probes, index: deps.indexGeneration.state(), indexBacklog };
}
