import type { Router } from 'express';
import { CreateTransferBody, ok } from '@mkt/contracts';
import { currentUser, withInput, serviceRouter } from '@mkt/kit';
import { ownWalletView } from '../domain/access';
import { BANKS } from '../domain/banks';
import { idempotent } from '../domain/idempotency';
import type { Limits } from '../domain/limits.service';
import { toTransferView, type Transfers } from '../domain/transfers';

/** `/wallets/banks`, `/wallets/rate-limit/stats`. */
export function walletInfoRouter(limits: Limits): Router {
  const router = serviceRouter();
  router.get('/banks', (_req, res) => {
    res.json(ok(BANKS, 'Banks retrieved'));
  });
  router.get('/rate-limit/stats', async (req, res) => {
    res.json(ok(await limits.stats(currentUser(req).id), 'Rate limit statistics'));
  });
  return router;
}

/** `/v1/wallet` and `/v1/wallet/transfers` (integer minor units). */
export function v1WalletRouter(transfers: Transfers, referencePrefix: string): Router {
  const router = serviceRouter();
  router.get('/', async (req, res) => {
    res.json(ok(await ownWalletView(currentUser(req), referencePrefix)));
  });
  router.post(
    '/transfers',
    withInput({ body: CreateTransferBody }, async (input, req, res) => {
      const user = currentUser(req);
      const answer = await idempotent('transfer', user.id, req.header('idempotency-key'), req.body, async (attempt) => ({
        status: 200,
        body: ok(toTransferView(await transfers.create(user, input.body, attempt)), 'Transfer completed'),
      }));
      res.status(answer.status).json(answer.body);
    }),
  );
  return router;
}
