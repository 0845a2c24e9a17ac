import type { Express } from 'express';
import { PayoutMoveParams, type PAYOUT_ADMIN_MOVES } from '@mkt/contracts/wallet';
import { adminRequestOf, correlationIdOf } from '@mkt/kit/http';
import { NotFound } from '@mkt/kit/domain';
import type { Payouts } from '../application/payouts.use-cases';
import type { WalletOperations } from './operations';
import { payoutCreatedView, payoutStatusView } from './views';

type PayoutMove = (typeof PAYOUT_ADMIN_MOVES)[number];

/** Its owner's (or an admin's) payout: the keyed request, its status and its cancel; an admin's moves. */
export function payoutOperations(
  payouts: Payouts,
): WalletOperations<
  | 'createPayoutRequest'
  | 'getPayoutRequestStatus'
  | 'cancelPayoutRequest'
  | 'approvePayoutRequest'
  | 'rejectPayoutRequest'
  | 'processPayoutRequest'
  | 'completePayoutRequest'
  | 'failPayoutRequest'
> {
  // An admin's moves (the entries' access checks the role before anything is read).
  const adminMove =
    (move: PayoutMove): WalletOperations<'approvePayoutRequest'>['approvePayoutRequest'] =>
    async ({ params, body }, { req, user }) => {
      const moved = await payouts.move(user, params.referenceId, move, body.adminNotes, adminRequestOf(req));
      return {
        data: payoutStatusView(user, await payouts.statusOf(user, moved.referenceId)),
        message: `Payout request ${moved.status.toLowerCase()}`,
      };
    };
  return {
    // Keyed (the entry is idempotent): kit runs it once per Idempotency-Key, under the records' scope `payout`.
    createPayoutRequest: async ({ params, body }, { req, user, attempt }) => ({
      data: payoutCreatedView(await payouts.create(user, params.userReferenceId, body, correlationIdOf(req), attempt)),
      message: 'Payout request created',
    }),
    getPayoutRequestStatus: async ({ params }, { user }) => ({
      data: payoutStatusView(user, await payouts.statusOf(user, params.referenceId)),
    }),
    cancelPayoutRequest: async ({ params }, { req, user }) => {
      await payouts.move(user, params.referenceId, 'cancel', undefined, adminRequestOf(req));
      return { message: 'Payout request cancelled' };
    },
    approvePayoutRequest: adminMove('approve'),
    rejectPayoutRequest: adminMove('reject'),
    processPayoutRequest: adminMove('process'),
    completePayoutRequest: adminMove('complete'),
    failPayoutRequest: adminMove('fail'),
  };
}

/**
 * A move the table has no entry for (`POST /wallets/payout-requests/{referenceId}/explode`): 400
 * on `move`, as when the moves were one route with the move as a parameter (not 404). Reached
 * only after the `/wallets` guard took the token, and never for an entry's path (the entries
 * answer first); an entry of its own would document a sixth move that does not exist.
 */
export function mountUnknownPayoutMove(app: Express): void {
  app.post(
    '/wallets/payout-requests/:referenceId/:move',
    // The move is checked as the one route of old did (400 on `move`); a valid one never gets here.
    (req, _res, next) => {
      const parsed = PayoutMoveParams.safeParse(req.params);
      next(parsed.success ? new NotFound('Payout move') : parsed.error);
    },
  );
}
