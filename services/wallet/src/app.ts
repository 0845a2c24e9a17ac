import type { Express } from 'express';
import { ENDPOINTS, INTERNAL_ENDPOINTS, OPERATIONS } from '@mkt/contracts/wallet';
import { createService, mountEndpoints, operationHandlers } from '@mkt/kit/http';
import type { IdempotentRequests } from '@mkt/kit/db';
import type { Runtime } from '@mkt/kit/runtime';
import type { BookingHolds } from './application/booking-holds.use-cases';
import type { Limits } from './application/limits.use-cases';
import type { Payouts } from './application/payouts.use-cases';
import type { Statements } from './application/statements.use-cases';
import type { TopUps } from './application/topups.use-cases';
import type { Transfers } from './application/transfers.use-cases';
import type { Wallets } from './application/wallets.use-cases';
import type { WalletConfig } from './config';
import { accountOperations } from './http/account.handlers';
import { adminQueueOperations } from './http/admin.handlers';
import { bookingHoldOperations, internalHoldHandlers } from './http/booking-holds.handlers';
import { checkoutOperations } from './http/checkout.handlers';
import { mountUnknownPayoutMove, payoutOperations } from './http/payouts.handlers';
import { statementOperations } from './http/statement.handlers';
import { topUpOperations } from './http/topups.handlers';
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
        tables: [ENDPOINTS, INTERNAL_ENDPOINTS],
        publicKey: runtime.accessKeys,
        serviceToken: config.INTERNAL_API_TOKEN,
        guardedPrefixes: ['/wallets', '/v1/wallet'],
        // `GET /v1/wallet/` answered as well when it was a router's root.
        optionalTrailingSlash: ['GET /v1/wallet'],
        handlers: {
          // One handler per operation of the wallet in the contracts' table, each typed by its entry.
          ...operationHandlers(
            OPERATIONS,
            'wallet',
            {
              ...accountOperations(parts.wallets, parts.transfers, parts.limits),
              ...topUpOperations(parts.topUps, config.MERCHANT_NAME),
              ...payoutOperations(parts.payouts),
              ...checkoutOperations(parts.topUps, parts.provider, config.MERCHANT_NAME),
              ...bookingHoldOperations(parts.holds),
              ...adminQueueOperations(parts.payouts, parts.holds),
              ...statementOperations(parts.statements),
            },
            // The keyed creates' records keep the scopes they were first written under.
            {
              idempotency: {
                requests: parts.requests,
                scopes: { createTopup: 'topup', createTransfer: 'transfer', createPayoutRequest: 'payout' },
              },
            },
          ),
          // The internal table's entries (no operationIds): keyed `METHOD /path`.
          ...internalHoldHandlers(parts.holds),
        },
      });
      mountUnknownPayoutMove(app);
    },
  });
}
