import type { Express } from 'express';
import { createService, mountEndpoints, type IdempotentRequests, type Runtime } from '@mkt/kit';
import type { BookingHolds } from './application/booking-holds';
import type { Limits } from './application/limits';
import type { Payouts } from './application/payouts';
import type { Statements } from './application/statements';
import type { TopUps } from './application/topups';
import type { Transfers } from './application/transfers';
import type { Wallets } from './application/wallets';
import type { WalletConfig } from './config';
import { accountHandlers } from './http/account.handlers';
import { adminQueueHandlers } from './http/admin.handlers';
import { bookingHoldHandlers } from './http/booking-holds.handlers';
import { checkoutHandlers } from './http/checkout.handlers';
import { mountUnknownPayoutMove, payoutHandlers } from './http/payouts.handlers';
import { statementHandlers } from './http/statement.handlers';
import { topUpHandlers } from './http/topups.handlers';
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
  statements: Statements;
  /** The keyed creates' Idempotency-Key records (kit's semantics on `idempotency_keys`). */
  requests: IdempotentRequests;
}

export interface AppDeps {
  config: Readonly<WalletConfig>;
  runtime: Pick<Runtime, 'log' | 'readiness' | 'accessKeys'>;
  parts: WalletHttpParts;
}

/**
 * The wallet's entries of the contracts' endpoint tables (`ENDPOINTS`, `INTERNAL_ENDPOINTS`),
 * each with its access from the table: the checkout pages and the webhook public (the webhook
 * signed, its body raw), the internal holds behind the service credential, the rest behind a
 * token — and so is anything else under `/wallets` or `/v1/wallet` before it hears 404 or 405.
 */
export function createApp({ config, runtime, parts }: AppDeps): Express {
  return createService({
    name: 'wallet',
    log: runtime.log,
    readiness: runtime.readiness,
    routes: (app) => {
      mountEndpoints(app, {
        service: 'wallet',
        publicKey: runtime.accessKeys,
        serviceToken: config.INTERNAL_API_TOKEN,
        guardedPrefixes: ['/wallets', '/v1/wallet'],
        // `GET /v1/wallet/` answered as well when it was a router's root.
        optionalTrailingSlash: ['GET /v1/wallet'],
        handlers: {
          ...accountHandlers(parts.wallets, parts.transfers, parts.limits, parts.requests),
          ...topUpHandlers(parts.topUps, parts.requests, config.MERCHANT_NAME),
          ...payoutHandlers(parts.payouts, parts.requests),
          ...checkoutHandlers(parts.topUps, parts.provider, config.MERCHANT_NAME),
          ...bookingHoldHandlers(parts.holds),
          ...adminQueueHandlers(parts.payouts, parts.holds),
          ...statementHandlers(parts.statements),
        },
      });
      mountUnknownPayoutMove(app);
    },
  });
}
