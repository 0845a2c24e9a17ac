import type { Express } from 'express';
import { authenticate, createService, type OutboxRelay, type Runtime } from '@mkt/kit';
import type { ConsultationConfig } from './config';
import { Bookings } from './domain/bookings';
import { Sessions } from './domain/sessions';
import { bookingsRouter } from './http/bookings.router';
import { WalletClient } from './payments/wallet.client';
import { consultationsRouter } from './http/consultations.router';
import { setupRouter } from './http/setup.router';

export interface AppDeps {
  config: Readonly<ConsultationConfig>;
  runtime: Pick<Runtime, 'log' | 'readiness'> & { outbox: OutboxRelay };
}

export interface ConsultationParts {
  bookings: Bookings;
  sessions: Sessions;
}

export function assembleParts(runtime: AppDeps['runtime'], config: Readonly<ConsultationConfig>): ConsultationParts {
  // Paid bookings: the wallet holds the total synchronously (the client waits for the answer).
  const wallet = new WalletClient(
    { url: config.WALLET_URL, token: config.INTERNAL_API_TOKEN, timeoutMs: config.WALLET_TIMEOUT_MS },
    runtime.log,
  );
  const payments = { deadlineMs: config.PAYMENT_DEADLINE_MINUTES * 60_000 };
  return {
    bookings: new Bookings(runtime.outbox, runtime.log, wallet, payments),
    sessions: new Sessions(runtime.outbox, runtime.log, {
      startLeadMs: config.SESSION_START_LEAD_MINUTES * 60_000,
      expiryGraceMs: config.SESSION_EXPIRY_GRACE_MINUTES * 60_000,
    }),
  };
}

/** The fixed paths (bookings, sessions, setup) come before `/consultations/{id}`. */
export function createApp({ config, runtime }: AppDeps, parts: ConsultationParts = assembleParts(runtime, config)): Express {
  const auth = authenticate(config.JWT_PUBLIC_KEY);
  return createService({
    name: 'consultation',
    log: runtime.log,
    readiness: runtime.readiness,
    routes: (app) => {
      app.use('/consultations', (req, res, next) => (isFixedPath(req.path) ? auth(req, res, next) : next()));
      // References this instance writes carry the configured prefix (CON, AVL-RST); lookups take any.
      const references = { prefix: config.REF_PREFIX };
      app.use('/consultations', bookingsRouter(parts.bookings, parts.sessions), setupRouter(auth, references));
      app.use('/consultations', consultationsRouter(config.JWT_PUBLIC_KEY, auth, references));
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
