import { createLogger, runService } from '@mkt/kit';
import { createApp } from './app';
import { loadConfig } from './config';

const config = loadConfig();
const log = createLogger('consultation', config.LOG_LEVEL);

runService({ name: 'consultation', config, log, models: [], createApp: (runtime) => createApp({ config, runtime }) }).catch(
  (err: unknown) => {
    log.fatal({ err }, 'could not start');
    process.exit(1);
  },
);
