import { createLogger, runService } from '@mkt/kit';
import { gatewayService } from './composition';
import { loadConfig } from './config';

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger('gateway', config.LOG_LEVEL);
  const gateway = gatewayService(config, log);
  await runService(gateway.options);
  if (config.ADMIN_EMAIL && config.ADMIN_PASSWORD)
    await gateway.identity().seedAdmin(config.ADMIN_EMAIL, config.ADMIN_PASSWORD, config.ADMIN_NAME);
}

main().catch((err: unknown) => {
  createLogger('gateway').fatal({ err }, 'could not start');
  process.exit(1);
});
