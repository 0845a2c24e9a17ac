import type { Express } from 'express';
import { CancelPayoutBody, OPERATIONS, PAYOUT_ADMIN_MOVES, PayoutMoveBody, PayoutMoveParams, PayoutRefParams, ok } from '@mkt/contracts';
import {
  adminRequestOf,
  correlationIdOf,
  currentUser,
  handle,
  NotFound,
  someOperationHandlers,
  type IdempotentRequests,
  type MountOptions,
} from '@mkt/kit';
import type { Payouts } from '../application/payouts';
import { payoutCreatedView, payoutStatusView } from './views';

export function payoutHandlers(payouts: Payouts, requests: IdempotentRequests): MountOptions['handlers'] {
  const handlers: MountOptions['handlers'] = {
    // Keyed (the entry is idempotent): kit runs it once per Idempotency-Key, under the records' scope `payout`.
    ...someOperationHandlers(
      OPERATIONS,
      {
        createPayoutRequest: async ({ params, body }, { req, user, attempt }) => ({
          data: payoutCreatedView(await payouts.create(user, params.userReferenceId, body, correlationIdOf(req), attempt)),
          message: 'Payout request created',
        }),
      },
      { idempotency: { requests, scopes: { createPayoutRequest: 'payout' } } },
    ),
    'GET /wallets/payout-requests/{referenceId}/status': handle({ params: PayoutRefParams }, async (input, req, res) => {
      const user = currentUser(req);
      res.json(ok(payoutStatusView(user, await payouts.statusOf(user, input.params.referenceId))));
    }),
    'POST /wallets/payout-requests/{referenceId}/cancel': handle(
      { params: PayoutRefParams, body: CancelPayoutBody },
      async (input, req, res) => {
        await payouts.move(currentUser(req), input.params.referenceId, 'cancel', undefined, adminRequestOf(req));
        res.json({ success: true, message: 'Payout request cancelled' });
      },
    ),
  };
  // An admin's moves (the entries' access checks the role before anything is read).
  for (const move of PAYOUT_ADMIN_MOVES) {
    handlers[`POST /wallets/payout-requests/{referenceId}/${move}`] = handle(
      { params: PayoutRefParams, body: PayoutMoveBody },
      async (input, req, res) => {
        const user = currentUser(req);
        const moved = await payouts.move(user, input.params.referenceId, move, input.body.adminNotes, adminRequestOf(req));
        res.json(
          ok(payoutStatusView(user, await payouts.statusOf(user, moved.referenceId)), `Payout request ${moved.status.toLowerCase()}`),
        );
      },
    );
  }
  return handlers;
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
