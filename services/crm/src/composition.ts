import { createDatabase, type Database } from '@mkt/kit/db';
import { createRuntime, periodicJob, type ServiceDefinition } from '@mkt/kit/runtime';
import { RecordDeletes, type ConsumerSpec, type OutboxRelay } from '@mkt/kit/bus';
import type { Logger } from '@mkt/kit/logger';
import { createApp, type CrmHttpParts } from './app';
import { Projection } from './application/projection.use-cases';
import { Relationships } from './application/relationships.use-cases';
import type { CrmConfig } from './config';
import { BookingFactRepository } from './db/booking-fact.repository';
import { crmMigrations } from './migrations';
import { allModels, crmModels, type CrmModels } from './db/models';
import { RelationshipRepository } from './db/relationship.repository';
import { KnownUserRepository } from './db/user.repository';
import { bookingsConsumer } from './events/bookings.consumer';
import { usersConsumer } from './events/users.consumer';

/** Every part of the CRM above its database, built at once. */
export interface CrmParts extends CrmHttpParts {
  models: CrmModels;
  projection: Projection;
  /** One consumer per queue of the CRM's subscriptions. */
  consumers: { users: ConsumerSpec; bookings: ConsumerSpec };
  /** Every delete of a relationship goes through here (an admin's records its audit entry). */
  deletes: RecordDeletes;
}

/**
 * The models (bound to `db`, unless given already bound), repositories, application services and
 * consumers (also the rebuild's); `outbox` publishes a delete's audit entry right after it (a write's own, its repository does).
 */
export function crmParts(db: Database, options: { models?: CrmModels; outbox?: Pick<OutboxRelay, 'flush'> } = {}): CrmParts {
  const models = options.models ?? crmModels(db);
  const relationshipRepository = new RelationshipRepository(models);
  const users = new KnownUserRepository(models);
  const facts = new BookingFactRepository(models);
  const projection = new Projection(relationshipRepository, facts, users);
  const outbox = options.outbox ?? { flush: async () => undefined };
  const deletes = new RecordDeletes(models.relationships, models.deletions, outbox);
  return {
    models,
    projection,
    deletes,
    relationships: new Relationships(relationshipRepository, users, facts, projection, deletes),
    consumers: { users: usersConsumer(projection), bookings: bookingsConsumer(projection) },
  };
}

/**
 * How the CRM is put together, every part at once and nothing connected (main.ts starts
 * `definition`; the component tests too, and read `parts`).
 */
export function crmService(config: Readonly<CrmConfig>, log: Logger): { definition: ServiceDefinition; parts: CrmParts } {
  const db = createDatabase();
  const models = crmModels(db);
  const runtime = createRuntime({
    name: 'crm',
    config,
    log,
    db,
    outboxSources: [
      { name: 'relationships', model: models.relationships },
      { name: 'deletions', model: models.deletions },
    ],
  });
  const parts = crmParts(db, { models, outbox: runtime.outbox });
  const app = createApp({ config, runtime, parts });
  const definition: ServiceDefinition = {
    runtime,
    config,
    models: allModels(parts.models),
    migrations: crmMigrations,
    app,
    consumers: [parts.consumers.users, parts.consumers.bookings],
    // A delete's claim its request left (a crash) is finished; drained tombstones are forgotten.
    jobs: [periodicJob('deletions-sweep', 10_000, () => parts.deletes.sweep())],
  };
  return { definition, parts };
}
