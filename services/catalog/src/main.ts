import './tracing';
import { createLogger } from '@mkt/kit/logger';
import { startService } from '@mkt/kit/runtime';
import { catalogService } from './composition';
import { loadConfig } from './config';

const config = loadConfig();
startService(catalogService(config, createLogger('catalog', config.LOG_LEVEL)).definition);
