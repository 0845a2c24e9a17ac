import './tracing';
import { createLogger, startService } from '@mkt/kit';
import { crmService } from './composition';
import { loadConfig } from './config';

const config = loadConfig();
startService(crmService(config, createLogger('crm', config.LOG_LEVEL)).definition);
