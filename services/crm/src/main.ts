import { createLogger, startService } from '@mkt/kit';
import { createApp } from './app';
import { loadConfig } from './config';
import { BookingFact, KnownUser, Relationship } from './db/crm.models';
import { bookingsConsumer, usersConsumer } from './events/consumers';

const config = loadConfig();
const log = createLogger('crm', config.LOG_LEVEL);

startService({
  name: 'crm',
  config,
  log,
  models: [KnownUser, Relationship, BookingFact],
  consumers: [usersConsumer, bookingsConsumer],
  createApp: (runtime) => createApp({ config, runtime }),
});
