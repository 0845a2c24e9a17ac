import { createLogger, runService } from '@mkt/kit';
import { createApp } from './app';
import { loadConfig } from './config';
import { BookingFact, KnownUser, Relationship } from './db/crm.models';
import { bookingsConsumer, usersConsumer } from './events/consumers';

const config = loadConfig();
const log = createLogger('crm', config.LOG_LEVEL);

runService({
  name: 'crm',
  config,
  log,
  models: [KnownUser, Relationship, BookingFact],
  consumers: [usersConsumer, bookingsConsumer],
  createApp: (runtime) => createApp({ config, runtime }),
}).catch((err: unknown) => {
  log.fatal({ err }, 'could not start');
  process.exit(1);
});
