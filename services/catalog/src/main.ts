import './tracing';
import { createLogger, startService } from '@mkt/kit';
import { catalogService } from './composition';
import { loadConfig } from './config';

const config = loadConfig();
startService(catalogService(config, createLogger('catalog', config.LOG_LEVEL)).definition);
