import type { Logger, RunOptions } from '@mkt/kit';
import { createApp } from './app';
import type { ReviewConfig } from './config';
import { Eligibility, Review, Reviewer } from './db/review.models';
import { sessionsConsumer, usersConsumer } from './events/consumers';

/** How the review service is put together (main.ts and the component tests). */
export function reviewService(config: Readonly<ReviewConfig>, log: Logger): RunOptions {
  return {
    name: 'review',
    config,
    log,
    models: [Review, Eligibility, Reviewer],
    outboxSources: [{ name: 'reviews', model: Review }],
    consumers: [sessionsConsumer, usersConsumer],
    createApp: (runtime) => createApp({ config, runtime }),
  };
}
