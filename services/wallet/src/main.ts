import { createLogger, startService } from '@mkt/kit';
import { createApp } from './app';
import { loadConfig } from './config';
import { LedgerEntryModel } from './db/ledger.model';
import { IdempotencyRecord, Payout, TopUp, Transfer, Usage } from './db/records.model';
import { Wallet } from './db/wallet.model';
import { userRegisteredConsumer } from './events/user-registered.consumer';
import { assembleWallet, type AssembledWallet } from './parts';

const config = loadConfig();
const log = createLogger('wallet', config.LOG_LEVEL);
let wallet: AssembledWallet | undefined;

startService({
  name: 'wallet',
  config,
  log,
  models: [Wallet, LedgerEntryModel, TopUp, Payout, Transfer, Usage, IdempotencyRecord],
  outboxSources: [
    { name: 'topups', model: TopUp },
    { name: 'payouts', model: Payout },
  ],
  consumers: [userRegisteredConsumer(config.REF_PREFIX)],
  createApp: (runtime) => {
    wallet = assembleWallet(config, runtime.outbox, log);
    return createApp({ config, runtime, parts: wallet });
  },
  jobs: [
    () => {
      let running: Promise<void> | null = null;
      const timer = setInterval(() => {
        running ??= (wallet?.sweep() ?? Promise.resolve()).finally(() => (running = null));
      }, config.SWEEP_INTERVAL_MS);
      timer.unref();
      return async () => {
        clearInterval(timer);
        await running;
      };
    },
  ],
});
