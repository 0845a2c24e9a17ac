import './tracing';
import { createLogger, startService } from '@mkt/kit';
import { walletService } from './composition';
import { loadConfig } from './config';

const config = loadConfig();
startService(walletService(config, createLogger('wallet', config.LOG_LEVEL)).definition);
