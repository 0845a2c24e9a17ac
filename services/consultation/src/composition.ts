import { newInternalId } from '@mkt/contracts/consultation';
import { createDatabase, IdempotentRequests, WindowedCounter } from '@mkt/kit/db';
import { createRuntime, periodicJob, type ServiceDefinition } from '@mkt/kit/runtime';
import type { Logger } from '@mkt/kit/logger';
import { createApp } from './app';
import { BookingFlow } from './application/bookings.steps';
import { Bookings } from './application/bookings.use-cases';
import { Consultations } from './application/consultations.use-cases';
import { CouponChecks } from './application/coupon-checks.use-cases';
import { Ratings } from './application/ratings.use-cases';
import { Sessions } from './application/sessions.use-cases';
import { Setup } from './application/setup.use-cases';
import type { ConsultationConfig } from './config';
import { BookingRepository } from './db/booking.repository';
import { ConsultationRepository } from './db/consultation.repository';
import { consultationModels } from './db/models';
import { OWED_CHECK_LIMIT } from './domain/bookings';
import { consultationMigrations } from './migrations';
import { PlaceRepository } from './db/place.repository';
import { RatingRepository } from './db/rating.repository';
import { SessionRepository } from './db/session.repository';
import { DiscountRepository, PricingRepository, RuleSetRepository, VisibilityRuleSetRepository } from './db/setup.repository';
import { reviewsConsumer } from './events/reviews.consumer';
import { walletPaymentsConsumer } from './events/payments.consumer';
import { WalletClient } from './payments/wallet.client';

/**
 * How the consultation service is put together (main.ts and the component tests): every part
 * built here, at once, on a database handle and runtime nothing has connected yet.
 */
export function consultationService(config: Readonly<ConsultationConfig>, log: Logger) {
  const db = createDatabase();
  const models = consultationModels(db);
  const runtime = createRuntime({
    name: 'consultation',
    config,
    log,
    db,
    outboxSources: [
      { name: 'bookings', model: models.Booking },
      { name: 'sessions', model: models.Session },
      { name: 'consultations', model: models.Consultation },
    ],
  });
  const repositories = {
    consultations: new ConsultationRepository(models),
    ruleSets: new RuleSetRepository(models),
    pricing: new PricingRepository(models),
    discounts: new DiscountRepository(models),
    visibility: new VisibilityRuleSetRepository(models),
    ratings: new RatingRepository(models),
    places: new PlaceRepository(models),
    bookings: new BookingRepository(models),
    sessions: new SessionRepository(models),
  };
  // References this instance writes carry the configured prefix (CON, AVL-RST); lookups take any.
  const references = { prefix: config.REF_PREFIX };
  const couponChecks = new CouponChecks(new WindowedCounter(models.CouponCheck));
  // The key's attempt names the booking, so a retry that takes over a dead attempt finds the booking it made.
  const bookingRequests = new IdempotentRequests(models.BookingRequestKey, () => newInternalId('bk'));
  // Paid bookings: the wallet holds the total synchronously (the client waits for the answer).
  const wallet = new WalletClient({ url: config.WALLET_URL, token: config.INTERNAL_API_TOKEN, timeoutMs: config.WALLET_TIMEOUT_MS }, log);
  const steps = new BookingFlow(repositories, wallet, log);
  const bookings = new Bookings({
    ...repositories,
    couponChecks,
    requests: bookingRequests,
    steps,
    wallet,
    payments: { deadlineMs: config.PAYMENT_DEADLINE_MINUTES * 60_000 },
    owedCheck: { everyMs: config.OWED_CHECK_MINUTES * 60_000, limit: OWED_CHECK_LIMIT },
    log,
  });
  const sessions = new Sessions({
    ...repositories,
    steps,
    log,
    rules: {
      startLeadMs: config.SESSION_START_LEAD_MINUTES * 60_000,
      expiryGraceMs: config.SESSION_EXPIRY_GRACE_MINUTES * 60_000,
      noShowGrace: { minMs: config.NO_SHOW_GRACE_MINUTES * 60_000, sharePercent: config.NO_SHOW_GRACE_PERCENT },
    },
  });
  const consultations = new Consultations({
    ...repositories,
    references,
    maxPerSeller: config.MAX_CONSULTATIONS_PER_SELLER,
  });
  const setup = new Setup({ ...repositories, couponChecks, references });
  const ratings = new Ratings(repositories.consultations, repositories.ratings);
  const parts = { models, repositories, bookings, sessions, consultations, setup, ratings, couponChecks, bookingRequests };
  const app = createApp({ config, runtime, ...parts });
  const definition: ServiceDefinition = {
    runtime,
    config,
    models: Object.values(models),
    migrations: consultationMigrations,
    app,
    consumers: [reviewsConsumer(ratings), walletPaymentsConsumer(bookings)],
    jobs: [
      periodicJob('booking-sweep', 10_000, () => bookings.sweep()),
      periodicJob('session-sweep', 60_000, () => sessions.sweep()),
      periodicJob('coupon-check-sweep', 60_000, () => couponChecks.sweep()),
    ],
  };
  return { definition, parts };
}
export type ConsultationParts = ReturnType<typeof consultationService>['parts'];
