import './tracing';
import { bufferedStdout, createLogger } from '@mkt/kit/logger';
import { startService } from '@mkt/kit/runtime';
import { walletService } from './composition';
import { loadConfig } from './config';

const config = loadConfig();
// Log lines buffered off the write paths, flushed at exit (kit's bufferedStdout).
startService(walletService(config, createLogger('wallet', config.LOG_LEVEL, bufferedStdout())).definition);
