import type { Router } from 'express';
import { CancelPayoutBody, CreatePayoutBody, PayoutMoveBody, PayoutMoveParams, PayoutRefParams, UserRefParams, ok } from '@mkt/contracts';
import { correlationIdOf, currentUser, withInput, serviceRouter, type IdempotentRequests } from '@mkt/kit';
import type { Payouts } from '../application/payouts';
import { payoutCreatedView, payoutStatusView } from './views';

export function payoutsRouter(payouts: Payouts, requests: IdempotentRequests): Router {
  const router = serviceRouter();
  router.post(
    '/users/:userReferenceId/payout-request',
    withInput({ params: UserRefParams, body: CreatePayoutBody }, async (input, req, res) => {
      const user = currentUser(req);
      const { userReferenceId } = input.params;
      const answer = await requests.run(
        'payout',
        user.id,
        req.header('idempotency-key'),
        { userReferenceId, body: req.body },
        async (attempt) => ({
          status: 200,
          body: ok(
            payoutCreatedView(await payouts.create(user, userReferenceId, input.body, correlationIdOf(req), attempt)),
            'Payout request created',
          ),
        }),
      );
      res.status(answer.status).json(answer.body);
    }),
  );
  router.get(
    '/payout-requests/:referenceId/status',
    withInput({ params: PayoutRefParams }, async (input, req, res) => {
      const user = currentUser(req);
      res.json(ok(payoutStatusView(user, await payouts.statusOf(user, input.params.referenceId))));
    }),
  );
  router.post(
    '/payout-requests/:referenceId/cancel',
    withInput({ params: PayoutRefParams, body: CancelPayoutBody }, async (input, req, res) => {
      await payouts.move(currentUser(req), input.params.referenceId, 'cancel', undefined, correlationIdOf(req));
      res.json({ success: true, message: 'Payout request cancelled' });
    }),
  );
  router.post(
    '/payout-requests/:referenceId/:move',
    withInput({ params: PayoutMoveParams, body: PayoutMoveBody }, async (input, req, res) => {
      const { referenceId, move } = input.params;
      const user = currentUser(req);
      const moved = await payouts.move(user, referenceId, move, input.body.adminNotes, correlationIdOf(req));
      res.json(ok(payoutStatusView(user, await payouts.statusOf(user, moved.referenceId)), `Payout request ${moved.status.toLowerCase()}`));
    }),
  );
  return router;
}
