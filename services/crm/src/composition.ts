import mongoose from 'mongoose';
import type { Logger, RunOptions } from '@mkt/kit';
import { createApp } from './app';
import { Projection } from './application/projection';
import { RelationshipService } from './application/relationships';
import type { CrmConfig } from './config';
import { BookingFactRepository } from './db/booking-fact.repository';
import { allModels, crmModels, type CrmModels } from './db/models';
import { RelationshipRepository } from './db/relationship.repository';
import { KnownUserRepository } from './db/user.repository';
import { crmConsumers, type CrmConsumers } from './events/consumers';

/** Every part of the CRM above its database, built at once. */
export interface CrmParts {
  models: CrmModels;
  projection: Projection;
  relationships: RelationshipService;
  consumers: CrmConsumers;
}

export interface CrmService extends RunOptions {
  parts: CrmParts;
}

/** The parts, on the models of the process's mongoose connection (connected by the runtime or the rebuild). */
export function crmParts(): CrmParts {
  const models = crmModels(mongoose.connection);
  const relationshipRepository = new RelationshipRepository(models);
  const users = new KnownUserRepository(models);
  const facts = new BookingFactRepository(models);
  const projection = new Projection(relationshipRepository, facts, users);
  return {
    models,
    projection,
    relationships: new RelationshipService(relationshipRepository, users, facts, projection),
    consumers: crmConsumers(projection),
  };
}

/** How the CRM is put together, eagerly (main.ts and the component tests). */
export function compose(config: Readonly<CrmConfig>, log: Logger): CrmService {
  const parts = crmParts();
  return {
    name: 'crm',
    config,
    log,
    models: allModels(parts.models),
    consumers: [parts.consumers.users, parts.consumers.bookings],
    parts,
    createApp: (runtime) => createApp({ config, runtime, parts }),
  };
}
