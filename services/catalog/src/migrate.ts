import { createLogger } from '@mkt/kit/logger';
import { startMigrations } from '@mkt/kit/runtime';
import { catalogService } from './composition';
import { loadConfig } from './config';

// `node dist/migrate.js up|down|status`: the service's migrations against its database, one
// run at a time (kit's lease), before the release's processes start (they refuse a database behind).
const config = loadConfig();
startMigrations(catalogService(config, createLogger('catalog-migrate', config.LOG_LEVEL)).definition);
