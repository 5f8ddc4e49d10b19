import type { StoreProbe } from '../resolvers/admin.js';
import * as admin from '../resolvers/admin.js';
import type { StoreStatus } from '../resolvers/admin.js';
import { builder } from './builder.js';

const StoreProbeRef = builder.objectRef<StoreProbe>('StoreProbe').implement({
  description: "One store's answer to a probe (select 1; PING, or on a Cluster its state and every master's PING), within a second.",
  fields: (t) => ({
    up: t.exposeBoolean('up'),
    latencyMs: t.exposeFloat('ms', { description: 'How long it took to answer, or to fail.' }),
    error: t.exposeString('error', { nullable: true, description: 'Why it is down.' }),
  }),
});

const IndexStateEnum = builder.enumType('IndexState', {
  values: {
    READY: { value: 'ready', description: 'Redis holds the index this process knows; reads are served.' },
    RECOVERING: { value: 'recovering', description: 'Redis lost the index; buckets are being rebuilt, and reads of those not back yet answer UNAVAILABLE.' },
    UNVERIFIED: {
      value: 'unverified',
      description: 'Not known yet whether Redis still holds the index (it has not answered since start-up or since it went away).',
    },
  } as const,
});

const StoreHealthRef = builder.objectRef<StoreStatus>('StoreHealth').implement({
  description: 'How the stores answer this process now.',
  fields: (t) => ({
    postgres: t.field({ type: StoreProbeRef, resolve: (status) => status.postgres }),
    redis: t.field({ type: StoreProbeRef, resolve: (status) => status.redis }),
    index: t.expose('index', { type: IndexStateEnum }),
    indexBacklog: t.exposeInt('indexBacklog', {
      nullable: true,
      description: 'Committed results the index has not applied yet (counted up to 100,000); usually 0. Null when PostgreSQL does not answer.',
    }),
  }),
});

builder.queryFields((t) => ({
  storeHealth: t.field({
    type: StoreHealthRef,
    description: "Admin. PostgreSQL and Redis probed now, this process's view of the index, and the index outbox; what /readyz says, with the detail.",
    authScopes: { admin: true },
    resolve: (_root, _args, ctx) => admin.storeHealth(ctx),
  }),
}));
