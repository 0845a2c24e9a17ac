import './tracing';
import { bufferedStdout, createLogger, startService } from '@mkt/kit';
import { consultationService } from './composition';
import { loadConfig } from './config';

const config = loadConfig();
// Log lines buffered off the write paths, flushed at exit (kit's bufferedStdout).
startService(consultationService(config, createLogger('consultation', config.LOG_LEVEL, bufferedStdout())).definition);
