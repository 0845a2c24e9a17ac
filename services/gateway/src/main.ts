import { connectMongo, createLogger, ensureIndexes, runService } from '@mkt/kit';
import { createGatewayLogger } from './logger';
import { gatewayService } from './composition';
import { loadConfig } from './config';

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createGatewayLogger(config.LOG_LEVEL);
  const gateway = gatewayService(config, log);
  // The admin exists before the port opens: no request can race its creation.
  await connectMongo({ url: config.MONGO_URL, dbName: config.MONGO_DB ?? 'gateway', log });
  await ensureIndexes(gateway.options.models);
  await gateway.seedAdmin();
  await runService(gateway.options);
}

main().catch((err: unknown) => {
  createLogger('gateway').fatal({ err }, 'could not start');
  process.exit(1);
});
