import type { Express } from 'express';
import { authenticate, createService, type Runtime } from '@mkt/kit';
import type { WalletConfig } from './config';
import type { BookingHolds } from './domain/booking-holds';
import type { Limits } from './domain/limits.service';
import type { Payouts } from './domain/payouts';
import type { TopUps } from './domain/topups';
import type { Transfers } from './domain/transfers';
import { v1WalletRouter, walletInfoRouter } from './http/account.router';
import { bookingHoldsRouter } from './http/booking-holds.router';
import { checkoutRouter } from './http/checkout.router';
import { internalRouter } from './http/internal.router';
import { payoutsRouter } from './http/payouts.router';
import { topUpsRouter } from './http/topups.router';
import type { PaymentProvider } from './payments/provider';

export interface WalletParts {
  topUps: TopUps;
  payouts: Payouts;
  transfers: Transfers;
  limits: Limits;
  provider: PaymentProvider;
  holds: BookingHolds;
}

export interface AppDeps {
  config: Readonly<WalletConfig>;
  runtime: Pick<Runtime, 'log' | 'readiness'>;
  parts: WalletParts;
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
        topUpsRouter(parts.topUps),
        payoutsRouter(parts.payouts),
        bookingHoldsRouter(parts.holds),
      );
      app.use('/v1/wallet', auth, v1WalletRouter(parts.transfers, config.REF_PREFIX));
      // Service to service only: a service credential, and no gateway route leads here.
      app.use('/internal', internalRouter(parts.holds, config.INTERNAL_API_TOKEN));
    },
  });
}
