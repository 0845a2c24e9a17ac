import type { Logger, OutboxRelay } from '@mkt/kit';
import type { WalletParts } from './app';
import type { WalletConfig } from './config';
import { LedgerRelay } from './db/ledger-relay';
import { dropForgottenOps } from './db/wallet.model';
import { BookingHolds } from './domain/booking-holds';
import { deleteExpiredIdempotencyKeys } from './domain/idempotency';
import { Limits } from './domain/limits.service';
import { Payouts } from './domain/payouts';
import { TopUps } from './domain/topups';
import { Transfers } from './domain/transfers';
import { ChapaProvider } from './payments/chapa.provider';
import type { PaymentProvider } from './payments/provider';
import { SandboxProvider } from './payments/sandbox.provider';

export interface AssembledWallet extends WalletParts {
  ledger: LedgerRelay;
  holds: BookingHolds;
  /** One pass of every sweeper: ledger moves, top-up reconciliation, resumed payouts and transfers, expiry. */
  sweep: () => Promise<void>;
}

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

/** Builds the wallet's parts from its configuration (main.ts and the tests). */
export function assembleWallet(config: Readonly<WalletConfig>, outbox: OutboxRelay, log: Logger): AssembledWallet {
  const ledger = new LedgerRelay(log);
  const provider = paymentProvider(config);
  const limits = new Limits({ daily: config.LIMIT_DAILY, weekly: config.LIMIT_WEEKLY, monthly: config.LIMIT_MONTHLY });
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
    outbox,
    ledger,
    log,
  );
  const payouts = new Payouts(config.REF_PREFIX, limits, outbox, ledger, log);
  const transfers = new Transfers(
    { referencePrefix: config.REF_PREFIX, maxAmountMinor: config.TRANSFER_MAX_AMOUNT, ceilingMinor: config.WALLET_BALANCE_CEILING },
    ledger,
    log,
  );
  const holds = new BookingHolds(
    { referencePrefix: config.REF_PREFIX, ceilingMinor: config.WALLET_BALANCE_CEILING, feeBps: config.PLATFORM_FEE_BPS },
    outbox,
    ledger,
    log,
  );
  const sweep = async () => {
    const steps = [
      () => topUps.reconcile(),
      () => holds.resume(),
      () => payouts.resume(),
      () => transfers.resume(),
      () => ledger.sweep(),
      () => dropForgottenOps(),
      () => limits.deleteExpired(),
      () => deleteExpiredIdempotencyKeys(),
    ];
    for (const step of steps) await step().catch((err: unknown) => log.warn({ err }, 'wallet sweep step failed'));
  };
  return { topUps, payouts, transfers, limits, provider, ledger, holds, sweep };
}
