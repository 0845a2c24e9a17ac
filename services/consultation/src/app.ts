import type { Express } from 'express';
import { ENDPOINTS, OPERATIONS } from '@mkt/contracts/consultation';
import { createService, mountEndpoints, operationHandlers } from '@mkt/kit/http';
import type { IdempotentRequests } from '@mkt/kit/db';
import type { Runtime } from '@mkt/kit/runtime';
import type { Bookings } from './application/bookings.use-cases';
import type { Consultations } from './application/consultations.use-cases';
import type { Sessions } from './application/sessions.use-cases';
import type { Setup } from './application/setup.use-cases';
import type { ConsultationConfig } from './config';
import { bookingHandlers } from './http/bookings.handlers';
import { consultationHandlers } from './http/consultations.handlers';
import { PRIVATE_PREFIXES } from './http/private-prefixes';
import { setupHandlers } from './http/setup.handlers';

/** What the HTTP side needs: config, logging and readiness, and the application services (built by `composition.ts`). */
export interface AppDeps {
  config: Readonly<ConsultationConfig>;
  runtime: Pick<Runtime, 'log' | 'readiness' | 'accessKeys'>;
  bookings: Bookings;
  sessions: Sessions;
  consultations: Consultations;
  setup: Setup;
  /** `Idempotency-Key` of `POST /consultations/bookings`. */
  bookingRequests: IdempotentRequests;
}

/**
 * The HTTP side: one handler per operation of this service in the contracts' table (access,
 * schemas, paths and the booking's Idempotency-Key come from the entry). The private prefixes are guarded as a whole: a request
 * under one that no entry answers needs a token before it hears 404 or 405.
 */
export function createApp(deps: AppDeps): Express {
  const { runtime } = deps;
  return createService({
    name: 'consultation',
    log: runtime.log,
    readiness: runtime.readiness,
    routes: (app) =>
      mountEndpoints(app, {
        service: 'consultation',
        tables: [ENDPOINTS],
        publicKey: runtime.accessKeys,
        guardedPrefixes: PRIVATE_PREFIXES.map((prefix) => `/consultations${prefix}`),
        handlers: operationHandlers(
          OPERATIONS,
          'consultation',
          {
            ...consultationHandlers(deps.consultations),
            ...bookingHandlers(deps.bookings, deps.sessions),
            ...setupHandlers(deps.setup),
          },
          // The booking's key records keep the scope they are stored under.
          { idempotency: { requests: deps.bookingRequests, scopes: { createBooking: 'booking' } } },
        ),
      }),
  });
}
