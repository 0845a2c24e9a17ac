import { createDatabase } from '@mkt/kit/db';
import { createRuntime, type ServiceDefinition } from '@mkt/kit/runtime';
import type { Logger } from '@mkt/kit/logger';
import { createApp } from './app';
import { Reviews } from './application/reviews.use-cases';
import type { ReviewConfig } from './config';
import { EligibilityRepository } from './db/eligibility.repository';
import { PaymentRepository } from './db/payment.repository';
import { reviewModels } from './db/models';
import { reviewMigrations } from './migrations';
import { ReviewerRepository, ReviewRepository } from './db/review.repository';
import { paymentsConsumer } from './events/payments.consumer';
import { sessionsConsumer } from './events/sessions.consumer';
import { usersConsumer } from './events/users.consumer';

/**
 * How the review service is put together (main.ts and the component tests): every part built
 * here, at once — its own database handle and the models bound to it, the runtime (bus, outbox
 * relay, readiness), repositories, use cases, consumers and the app. Nothing connects until the
 * definition is started.
 */
export function reviewService(config: Readonly<ReviewConfig>, log: Logger) {
  const db = createDatabase();
  const models = reviewModels(db);
  const runtime = createRuntime({ name: 'review', config, log, db, outboxSources: [{ name: 'reviews', model: models.Review }] });
  const repositories = {
    reviews: new ReviewRepository(models.Review),
    eligibility: new EligibilityRepository(models.Eligibility),
    reviewers: new ReviewerRepository(models.Reviewer),
    payments: new PaymentRepository(models.Payment),
  };
  const policy = { minPaidPercent: config.REVIEW_MIN_PAID_PERCENT, minPaidMinor: config.REVIEW_MIN_PAID_MINOR };
  const reviews = new Reviews(repositories, log, policy);
  const consumers = { sessions: sessionsConsumer(reviews), payments: paymentsConsumer(reviews), users: usersConsumer(reviews) };
  const definition: ServiceDefinition = {
    runtime,
    config,
    models: Object.values(models),
    migrations: reviewMigrations,
    app: createApp({ config, runtime, reviews }),
    consumers: [consumers.sessions, consumers.payments, consumers.users],
  };
  return { definition, parts: { models, repositories, reviews, consumers } };
}
