import './tracing';
import { createLogger, startService } from '@mkt/kit';
import { consultationService } from './composition';
import { loadConfig } from './config';

const config = loadConfig();
startService(consultationService(config, createLogger('consultation', config.LOG_LEVEL)).definition);
