import type { Router } from 'express';
import { CreateTopUpBody, TopUpRefParams, UserRefParams, ok } from '@mkt/contracts';
import { currentUser, withInput, serviceRouter } from '@mkt/kit';
import { idempotent } from '../domain/idempotency';
import type { TopUps } from '../domain/topups';

export function topUpsRouter(topUps: TopUps): Router {
  const router = serviceRouter();
  router.post(
    '/users/:userReferenceId/topup',
    withInput({ params: UserRefParams, body: CreateTopUpBody }, async (input, req, res) => {
      const user = currentUser(req);
      const { userReferenceId } = input.params;
      const answer = await idempotent('topup', user.id, req.header('idempotency-key'), { userReferenceId, body: req.body }, async () => ({
        status: 200,
        body: ok(await topUps.create(user, userReferenceId, input.body), 'Top-up created'),
      }));
      res.status(answer.status).json(answer.body);
    }),
  );
  router.get(
    '/topup/:walletReferenceId/status',
    withInput({ params: TopUpRefParams }, async (input, req, res) => {
      res.json(ok(await topUps.status(currentUser(req), input.params.walletReferenceId)));
    }),
  );
  return router;
}
