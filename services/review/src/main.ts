import { createLogger, startService } from '@mkt/kit';
import { createApp } from './app';
import { loadConfig } from './config';
import { Eligibility, Review, Reviewer } from './db/review.models';
import { sessionsConsumer, usersConsumer } from './events/consumers';

const config = loadConfig();
const log = createLogger('review', config.LOG_LEVEL);

startService({
  name: 'review',
  config,
  log,
  models: [Review, Eligibility, Reviewer],
  outboxSources: [{ name: 'reviews', model: Review }],
  consumers: [sessionsConsumer, usersConsumer],
  createApp: (runtime) => createApp({ config, runtime }),
});
