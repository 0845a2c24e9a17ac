import type { Express } from 'express';
import { authenticate, createService, type IdempotentRequests, type Runtime } from '@mkt/kit';
import type { BookingHolds } from './application/booking-holds';
import type { Limits } from './application/limits';
import type { Payouts } from './application/payouts';
import type { TopUps } from './application/topups';
import type { Transfers } from './application/transfers';
import type { Wallets } from './application/wallets';
import type { WalletConfig } from './config';
import { v1WalletRouter, walletInfoRouter } from './http/account.router';
import { bookingHoldsRouter } from './http/booking-holds.router';
import { checkoutRouter } from './http/checkout.router';
import { internalRouter } from './http/internal.router';
import { payoutsRouter } from './http/payouts.router';
import { topUpsRouter } from './http/topups.router';
import type { PaymentProvider } from './payments/provider';

/** What the HTTP layer calls: the application services (composition.ts builds them). */
export interface WalletHttpParts {
  wallets: Wallets;
  topUps: TopUps;
  payouts: Payouts;
  transfers: Transfers;
  limits: Limits;
  provider: PaymentProvider;
  holds: BookingHolds;
  /** The keyed creates' Idempotency-Key records (kit's semantics on `idempotency_keys`). */
  requests: IdempotentRequests;
}

export interface AppDeps {
  config: Readonly<WalletConfig>;
  runtime: Pick<Runtime, 'log' | 'readiness'>;
  parts: WalletHttpParts;
}

/** Public checkout and webhook first (raw and form bodies), then everything behind a token. */
export function createApp({ config, runtime, parts }: AppDeps): Express {
  return createService({
    name: 'wallet',
    log: runtime.log,
    readiness: runtime.readiness,
    beforeBodyParser: (app) => {
      app.use('/wallets', checkoutRouter(parts.topUps, parts.provider, config.MERCHANT_NAME));
    },
    routes: (app) => {
      const auth = authenticate(config.JWT_PUBLIC_KEY);
      app.use(
        '/wallets',
        auth,
        walletInfoRouter(parts.limits),
        topUpsRouter(parts.topUps, parts.requests),
        payoutsRouter(parts.payouts, parts.requests),
        bookingHoldsRouter(parts.holds),
      );
      app.use('/v1/wallet', auth, v1WalletRouter(parts.wallets, parts.transfers, parts.requests));
      // Service to service only: a service credential, and no gateway route leads here.
      app.use('/internal', internalRouter(parts.holds, config.INTERNAL_API_TOKEN));
    },
  });
}
