import { connectMongo, createLogger, disconnectMongo, ensureIndexes } from '@mkt/kit';
import { loadConfig } from './config';
import { BookingFact, KnownUser, Relationship } from './db/crm.models';
import { rebuildAll } from './domain/projection';

/** `pnpm --filter @mkt/crm rebuild`: recomputes every relationship's totals from the stored booking facts. */
async function main(): Promise<void> {
  // Only the database is needed here; the broker and the token key are not.
  const config = loadConfig({ AMQP_URL: 'unused', JWT_PUBLIC_KEY: 'unused', ...process.env });
  const log = createLogger('crm-rebuild', config.LOG_LEVEL);
  await connectMongo({ url: config.MONGO_URL, dbName: config.MONGO_DB ?? 'crm', log });
  await ensureIndexes([KnownUser, Relationship, BookingFact]);
  const pairs = await rebuildAll();
  log.info({ pairs }, 'relationship totals rebuilt from booking facts');
  await disconnectMongo();
}

main().catch((err: unknown) => {
  createLogger('crm-rebuild').fatal({ err }, 'rebuild failed');
  process.exit(1);
});
