import './tracing';
import { bufferedStdout, createLogger } from '@mkt/kit/logger';
import { startService } from '@mkt/kit/runtime';
import { consultationService } from './composition';
import { loadConfig } from './config';

const config = loadConfig();
// Log lines buffered off the write paths, flushed at exit (kit's bufferedStdout).
startService(consultationService(config, createLogger('consultation', config.LOG_LEVEL, bufferedStdout())).definition);
