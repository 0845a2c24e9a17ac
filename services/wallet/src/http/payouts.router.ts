import type { Router } from 'express';
import { CancelPayoutBody, CreatePayoutBody, PayoutMoveBody, PayoutMoveParams, PayoutRefParams, UserRefParams, ok } from '@mkt/contracts';
import { correlationIdOf, currentUser, withInput, serviceRouter } from '@mkt/kit';
import { idempotent } from '../domain/idempotency';
import type { Payouts } from '../domain/payouts';

export function payoutsRouter(payouts: Payouts): Router {
  const router = serviceRouter();
  router.post(
    '/users/:userReferenceId/payout-request',
    withInput({ params: UserRefParams, body: CreatePayoutBody }, async (input, req, res) => {
      const user = currentUser(req);
      const { userReferenceId } = input.params;
      const answer = await idempotent(
        'payout',
        user.id,
        req.header('idempotency-key'),
        { userReferenceId, body: req.body },
        async (attempt) => ({
          status: 200,
          body: ok(await payouts.create(user, userReferenceId, input.body, correlationIdOf(req), attempt), 'Payout request created'),
        }),
      );
      res.status(answer.status).json(answer.body);
    }),
  );
  router.get(
    '/payout-requests/:referenceId/status',
    withInput({ params: PayoutRefParams }, async (input, req, res) => {
      res.json(ok(await payouts.status(currentUser(req), input.params.referenceId)));
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
      const moved = await payouts.move(currentUser(req), referenceId, move, input.body.adminNotes, correlationIdOf(req));
      res.json(ok(await payouts.status(currentUser(req), moved.referenceId), `Payout request ${moved.status.toLowerCase()}`));
    }),
  );
  return router;
}
