/** `@mkt/kit/logger`: the pino logger every service and kit log through, with secrets redacted. */
export { bufferedStdout, createLogger, type Logger, redactQuerySecrets } from '../logger';
