import { createDatabase, IdempotentRequests, WindowedCounter } from '@mkt/kit/db';
import { createRuntime, periodicJob, type ServiceDefinition } from '@mkt/kit/runtime';
import type { Logger } from '@mkt/kit/logger';
import { createApp, type WalletHttpParts } from './app';
import { BookingHolds } from './application/booking-holds.use-cases';
import { Limits } from './application/limits.use-cases';
import { Payouts } from './application/payouts.use-cases';
import { Statements } from './application/statements.use-cases';
import { walletSweep } from './application/wallet.sweep';
import { TopUps } from './application/topups.use-cases';
import { Transfers } from './application/transfers.use-cases';
import { WalletSteps } from './application/wallet.steps';
import { Wallets } from './application/wallets.use-cases';
import type { WalletConfig } from './config';
import { BookingHoldRepository } from './db/booking-hold.repository';
import { holdMetrics } from './db/booking-holds.metrics';
import { LedgerRepository } from './db/ledger.repository';
import { walletModels, type WalletModels } from './db/models';
import { walletMigrations } from './migrations';
import { PayoutRepository } from './db/payout.repository';
import { TopUpRepository } from './db/topup.repository';
import { TransferRepository } from './db/transfer.repository';
import { WalletRepository } from './db/wallet.repository';
import { FINISH_INFLIGHT_AFTER_MS } from './domain/wallet-ops';
import { bookingEventsConsumer } from './events/bookings.consumer';
import { usersConsumer } from './events/users.consumer';
import { ChapaProvider } from './payments/chapa.provider';
import type { PaymentProvider } from './payments/provider';
import { SandboxProvider } from './payments/sandbox.provider';

export function paymentProvider(config: Readonly<WalletConfig>): PaymentProvider {
  if (config.PAYMENT_PROVIDER === 'sandbox') return new SandboxProvider(config.PUBLIC_URL);
  return new ChapaProvider({
    baseUrl: config.CHAPA_BASE_URL,
    secretKey: config.CHAPA_SECRET_KEY,
    webhookSecret: config.CHAPA_WEBHOOK_SECRET,
    callbackUrl: `${config.PUBLIC_URL}/wallets/webhooks/chapa`,
    timeoutMs: config.CHAPA_TIMEOUT_MS,
  });
}

/** Every part of the wallet, built at once from its configuration (main.ts, the tests). */
export interface WalletParts extends WalletHttpParts {
  models: WalletModels;
  walletRepository: WalletRepository;
  ledger: LedgerRepository;
  steps: WalletSteps;
  /** One pass of every sweeper: top-up reconciliation, resumed settlements, payouts and transfers, ledger moves, expiry. */
  sweep: () => Promise<void>;
}

/**
 * How the wallet is put together, every part at once and nothing late: its own database handle
 * (kit's `createDatabase`, opened when the service starts) with the models bound to it, kit's
 * runtime, the repositories, the application services, the app, the consumers and the jobs.
 * main.ts starts `definition`; the tests start the same and read `parts`.
 */
export function walletService(config: Readonly<WalletConfig>, log: Logger): { definition: ServiceDefinition; parts: WalletParts } {
  const db = createDatabase();
  const models = walletModels(db);
  const runtime = createRuntime({
    name: 'wallet',
    config,
    log,
    db,
    outboxSources: [
      { name: 'topups', model: models.TopUp },
      { name: 'payouts', model: models.Payout },
      { name: 'booking-holds', model: models.BookingHold },
    ],
  });
  const walletRepository = new WalletRepository(models);
  const ledger = new LedgerRepository(models, walletRepository, log);
  const holdRepository = new BookingHoldRepository(models);
  const steps = new WalletSteps(walletRepository, ledger);
  const wallets = new Wallets(walletRepository, config.REF_PREFIX);
  const provider = paymentProvider(config);
  const requests = new IdempotentRequests(models.IdempotencyRecord);
  const limits = new Limits(
    { daily: config.LIMIT_DAILY, weekly: config.LIMIT_WEEKLY, monthly: config.LIMIT_MONTHLY },
    new WindowedCounter(models.Usage),
  );
  const topUpRepository = new TopUpRepository(models);
  const topUps = new TopUps(
    {
      referencePrefix: config.REF_PREFIX,
      expiryMinutes: config.TOPUP_EXPIRY_MINUTES,
      publicUrl: config.PUBLIC_URL,
      maxAmountMinor: config.TOPUP_MAX_AMOUNT,
      ceilingMinor: config.WALLET_BALANCE_CEILING,
      redirectOrigins: config.CHECKOUT_REDIRECT_ORIGINS,
    },
    provider,
    limits,
    topUpRepository,
    walletRepository,
    wallets,
    steps,
    log,
  );
  const payoutRepository = new PayoutRepository(models);
  const payouts = new Payouts(limits, payoutRepository, wallets, steps, log);
  const transferRepository = new TransferRepository(models);
  const transfers = new Transfers(
    { referencePrefix: config.REF_PREFIX, maxAmountMinor: config.TRANSFER_MAX_AMOUNT, ceilingMinor: config.WALLET_BALANCE_CEILING },
    transferRepository,
    walletRepository,
    wallets,
    steps,
    log,
  );
  const holds = new BookingHolds(
    {
      referencePrefix: config.REF_PREFIX,
      ceilingMinor: config.WALLET_BALANCE_CEILING,
      feeBps: config.PLATFORM_FEE_BPS,
      noShowDisputeWindowMs: config.NO_SHOW_DISPUTE_WINDOW_MINUTES * 60_000,
    },
    holdRepository,
    walletRepository,
    wallets,
    steps,
    log,
    transferRepository,
  );
  const statements = new Statements(walletRepository, ledger, topUpRepository, payoutRepository, transferRepository, holdRepository);
  const sweep = walletSweep(
    [
      { name: 'ops-in-flight', run: () => ledger.sweep(new Date(Date.now() - FINISH_INFLIGHT_AFTER_MS)) },
      { name: 'topups', run: () => topUps.reconcile() },
      { name: 'booking-holds', run: () => holds.resume() },
      { name: 'payouts', run: () => payouts.resume() },
      { name: 'transfers', run: () => transfers.resume() },
      { name: 'limits', run: () => limits.deleteExpired() },
      { name: 'idempotency-keys', run: () => requests.deleteExpired() },
    ],
    log,
  );
  const parts: WalletParts = {
    models,
    walletRepository,
    ledger,
    steps,
    wallets,
    topUps,
    payouts,
    transfers,
    limits,
    provider,
    holds,
    statements,
    requests,
    sweep,
  };
  const definition: ServiceDefinition = {
    runtime,
    config,
    models: Object.values(models),
    migrations: walletMigrations(ledger, models),
    app: createApp({ config, runtime, parts }),
    consumers: [usersConsumer(wallets), bookingEventsConsumer(holds)],
    jobs: [periodicJob('wallet-sweep', config.SWEEP_INTERVAL_MS, sweep), holdMetrics(holdRepository)],
  };
  return { definition, parts };
}
