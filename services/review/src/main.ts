import './tracing';
import { createLogger, startService } from '@mkt/kit';
import { reviewService } from './composition';
import { loadConfig } from './config';

const config = loadConfig();
startService(reviewService(config, createLogger('review', config.LOG_LEVEL)).definition);
