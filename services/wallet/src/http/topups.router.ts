import { Router } from 'express';
import { CreateTopUpBody, TopUpRefParams, UserRefParams, ok } from '@mkt/contracts';
import { currentUser, validate } from '@mkt/kit';
import { idempotent } from '../domain/idempotency';
import type { TopUps } from '../domain/topups';

export function topUpsRouter(topUps: TopUps): Router {
  const router = Router();
  router.post('/users/:userReferenceId/topup', validate({ params: UserRefParams, body: CreateTopUpBody }), async (req, res) => {
    const user = currentUser(req);
    const { userReferenceId } = res.locals.params;
    const answer = await idempotent('topup', user.id, req.header('idempotency-key'), { userReferenceId, body: req.body }, async () => ({
      status: 200,
      body: ok(await topUps.create(user, userReferenceId, res.locals.body), 'Top-up created'),
    }));
    res.status(answer.status).json(answer.body);
  });
  router.get('/topup/:walletReferenceId/status', validate({ params: TopUpRefParams }), async (req, res) => {
    res.json(ok(await topUps.status(currentUser(req), res.locals.params.walletReferenceId)));
  });
  return router;
}
