import mongoose, { type Connection } from 'mongoose';
import type { Logger, OutboxRelay, RunOptions } from '@mkt/kit';
import { createApp } from './app';
import { Reviews, type OutboxFlush } from './application/reviews';
import type { ReviewConfig } from './config';
import { EligibilityRepository } from './db/eligibility.repository';
import { reviewModels, type ReviewDoc } from './db/models';
import { ReviewerRepository, ReviewRepository } from './db/review.repository';
import { reviewConsumers } from './events/consumers';

/**
 * The outbox relay as the use cases see it. kit's runtime makes the relay when it starts (after
 * this composition): it is handed over then, and a flush before that is left to the relay's
 * sweep. Goes when kit builds the runtime first (issue 23 phase 2, `createRuntime`).
 */
class RelayWhenStarted implements OutboxFlush {
  private relay: OutboxRelay | null = null;
  constructor(private readonly model: mongoose.Model<ReviewDoc>) {}
  started(relay: OutboxRelay): void {
    this.relay = relay;
  }
  async flush(doc: ReviewDoc): Promise<void> {
    await this.relay?.flush(this.model, doc);
  }
}

/**
 * How the review service is put together (main.ts and the component tests): every part built
 * here, at once — models on the connection, repositories, the use cases, consumers, the app.
 */
export function reviewService(config: Readonly<ReviewConfig>, log: Logger, db: Connection = mongoose.connection) {
  const models = reviewModels(db);
  const repositories = {
    reviews: new ReviewRepository(models.Review),
    eligibility: new EligibilityRepository(models.Eligibility),
    reviewers: new ReviewerRepository(models.Reviewer),
  };
  const outbox = new RelayWhenStarted(models.Review);
  const reviews = new Reviews(repositories, outbox, log);
  const consumers = reviewConsumers(reviews);
  const options: RunOptions = {
    name: 'review',
    config,
    log,
    models: Object.values(models),
    outboxSources: [{ name: 'reviews', model: models.Review }],
    consumers: [consumers.sessions, consumers.users],
    createApp: (runtime) => {
      outbox.started(runtime.outbox);
      return createApp({ config, runtime, reviews });
    },
  };
  return { options, models, repositories, reviews, consumers };
}
