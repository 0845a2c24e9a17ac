import type { Express } from 'express';
import { authenticate, createService, type IdempotentRequests, type Logger, type ReadinessCheck } from '@mkt/kit';
import type { Bookings } from './application/bookings';
import type { Consultations } from './application/consultations';
import type { Sessions } from './application/sessions';
import type { Setup } from './application/setup';
import type { ConsultationConfig } from './config';
import { bookingsRouter } from './http/bookings.router';
import { consultationsRouter } from './http/consultations.router';
import { setupRouter } from './http/setup.router';

/** What the HTTP side calls: the application services (built by `composition.ts`). */
export interface AppParts {
  bookings: Bookings;
  sessions: Sessions;
  consultations: Consultations;
  setup: Setup;
  /** `Idempotency-Key` of `POST /consultations/bookings`. */
  bookingRequests: IdempotentRequests;
}

export interface AppDeps {
  config: Readonly<ConsultationConfig>;
  log: Logger;
  readiness: ReadinessCheck[];
}

/** The HTTP routes. The fixed paths (bookings, sessions, setup) come before `/consultations/{id}`. */
export function createApp({ config, log, readiness }: AppDeps, parts: AppParts): Express {
  const auth = authenticate(config.JWT_PUBLIC_KEY);
  return createService({
    name: 'consultation',
    log,
    readiness,
    routes: (app) => {
      app.use('/consultations', (req, res, next) => (isFixedPath(req.path) ? auth(req, res, next) : next()));
      app.use('/consultations', bookingsRouter(parts.bookings, parts.sessions, parts.bookingRequests), setupRouter(auth, parts.setup));
      app.use('/consultations', consultationsRouter(config.JWT_PUBLIC_KEY, auth, parts.consultations));
    },
  });
}

const FIXED = ['/bookings', '/sessions', '/availability-rule-sets', '/pricing', '/visibility'];
/**
 * Compared as loosely as any router could match (case, repeated slashes): a spelling that some
 * route might answer never passes without a token. The setup router also checks the token on
 * its own prefixes, so its routes do not depend on this string match at all.
 */
export function isFixedPath(path: string): boolean {
  const normalized = path.toLowerCase().replace(/\/{2,}/g, '/');
  return FIXED.some((prefix) => normalized === prefix || normalized.startsWith(`${prefix}/`));
}
