import { Router } from 'express';
import { CancelPayoutBody, CreatePayoutBody, PayoutMoveBody, PayoutMoveParams, PayoutRefParams, UserRefParams, ok } from '@mkt/contracts';
import { correlationIdOf, currentUser, validate } from '@mkt/kit';
import { idempotent } from '../domain/idempotency';
import type { Payouts } from '../domain/payouts';

export function payoutsRouter(payouts: Payouts): Router {
  const router = Router();
  router.post('/users/:userReferenceId/payout-request', validate({ params: UserRefParams, body: CreatePayoutBody }), async (req, res) => {
    const user = currentUser(req);
    const { userReferenceId } = res.locals.params;
    const answer = await idempotent('payout', user.id, req.header('idempotency-key'), { userReferenceId, body: req.body }, async () => ({
      status: 200,
      body: ok(await payouts.create(user, userReferenceId, res.locals.body, correlationIdOf(req)), 'Payout request created'),
    }));
    res.status(answer.status).json(answer.body);
  });
  router.get('/payout-requests/:referenceId/status', validate({ params: PayoutRefParams }), async (req, res) => {
    res.json(ok(await payouts.status(currentUser(req), res.locals.params.referenceId)));
  });
  router.post('/payout-requests/:referenceId/cancel', validate({ params: PayoutRefParams, body: CancelPayoutBody }), async (req, res) => {
    await payouts.move(currentUser(req), res.locals.params.referenceId, 'cancel', undefined, correlationIdOf(req));
    res.json({ success: true, message: 'Payout request cancelled' });
  });
  router.post('/payout-requests/:referenceId/:move', validate({ params: PayoutMoveParams, body: PayoutMoveBody }), async (req, res) => {
    const { referenceId, move } = res.locals.params;
    const moved = await payouts.move(currentUser(req), referenceId, move, res.locals.body.adminNotes, correlationIdOf(req));
    res.json(ok(await payouts.status(currentUser(req), moved.referenceId), `Payout request ${moved.status.toLowerCase()}`));
  });
  return router;
}
