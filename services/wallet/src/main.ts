import { createLogger, runService } from '@mkt/kit';
import { createApp } from './app';
import { loadConfig } from './config';

const config = loadConfig();
const log = createLogger('wallet', config.LOG_LEVEL);

runService({ name: 'wallet', config, log, models: [], createApp: (runtime) => createApp({ config, runtime }) }).catch((err: unknown) => {
  log.fatal({ err }, 'could not start');
  process.exit(1);
});
