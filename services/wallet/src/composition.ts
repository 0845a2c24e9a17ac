import { periodicJob, type Logger, type RunOptions } from '@mkt/kit';
import { createApp } from './app';
import type { WalletConfig } from './config';
import { LedgerEntryModel } from './db/ledger.model';
import { IdempotencyRecord, Payout, TopUp, Transfer, Usage } from './db/records.model';
import { Wallet } from './db/wallet.model';
import { BookingHold } from './db/booking-hold.model';
import { bookingEventsConsumer } from './events/booking-events.consumer';
import { userRegisteredConsumer } from './events/user-registered.consumer';
import { assembleWallet, type AssembledWallet } from './parts';
import { holdMetrics } from './db/hold-metrics';

/** How the wallet is put together (main.ts and the component tests). */
export function walletService(config: Readonly<WalletConfig>, log: Logger) {
  let parts: AssembledWallet | undefined;
  const options: RunOptions = {
    name: 'wallet',
    config,
    log,
    models: [Wallet, LedgerEntryModel, TopUp, Payout, Transfer, Usage, IdempotencyRecord, BookingHold],
    outboxSources: [
      { name: 'topups', model: TopUp },
      { name: 'payouts', model: Payout },
      { name: 'booking-holds', model: BookingHold },
    ],
    // The consumers need the parts; the runtime registers them before it builds the app.
    consumers: [userRegisteredConsumer(config.REF_PREFIX), bookingEventsConsumer(() => parts?.holds)],
    createApp: (runtime) => {
      parts = assembleWallet(config, runtime.outbox, log);
      return createApp({ config, runtime, parts });
    },
    jobs: [periodicJob('wallet-sweep', config.SWEEP_INTERVAL_MS, () => parts!.sweep()), holdMetrics()],
  };
  return { options, parts: () => parts! };
}
