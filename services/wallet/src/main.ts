import './tracing';
import { createLogger, startService } from '@mkt/kit';
import { compose } from './composition';
import { loadConfig } from './config';

const config = loadConfig();
startService(compose(config, createLogger('wallet', config.LOG_LEVEL)).definition);
