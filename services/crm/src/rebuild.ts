import { closeDatabase, createDatabase, ensureIndexes, openDatabase } from '@mkt/kit/db';
import { createLogger } from '@mkt/kit/logger';
import { crmParts } from './composition';
import { loadConfig } from './config';
import { allModels } from './db/models';

/**
 * `pnpm --filter @mkt/crm rebuild` (a script entry beside main.ts): recomputes every
 * relationship's totals from the stored booking facts (application/projection.use-cases.ts `rebuildAll`).
 */
async function main(): Promise<void> {
  // Only the database is needed here; the broker and the token key are not.
  const config = loadConfig({ AMQP_URL: 'unused', JWT_PUBLIC_KEY: 'unused', ...process.env });
  const log = createLogger('crm-rebuild', config.LOG_LEVEL);
  const db = createDatabase();
  const parts = crmParts(db);
  // A one-shot job whose index builds (ensureIndexes) may run long and silent: no socket timeout.
  await openDatabase(db, {
    url: config.MONGO_URL,
    dbName: config.MONGO_DB ?? 'crm',
    log,
    tlsCaFile: config.MONGO_TLS_CA_FILE,
    socketTimeoutMs: 0,
  });
  await ensureIndexes(allModels(parts.models));
  const pairs = await parts.projection.rebuildAll();
  log.info({ pairs }, 'relationship totals rebuilt from booking facts');
  await closeDatabase(db);
}

main().catch((err: unknown) => {
  createLogger('crm-rebuild').fatal({ err }, 'rebuild failed');
  process.exit(1);
});
