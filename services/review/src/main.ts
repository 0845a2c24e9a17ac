import './tracing';
import { createLogger } from '@mkt/kit/logger';
import { startService } from '@mkt/kit/runtime';
import { reviewService } from './composition';
import { loadConfig } from './config';

const config = loadConfig();
startService(reviewService(config, createLogger('review', config.LOG_LEVEL)).definition);
