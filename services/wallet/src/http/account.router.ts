import type { Router } from 'express';
import { CreateTransferBody, ok } from '@mkt/contracts';
import { currentUser, withInput, serviceRouter, type IdempotentRequests } from '@mkt/kit';
import type { Limits } from '../application/limits';
import type { Transfers } from '../application/transfers';
import type { Wallets } from '../application/wallets';
import { BANKS } from '../domain/banks';
import { transferView, walletView } from './views';

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
export function v1WalletRouter(wallets: Wallets, transfers: Transfers, requests: IdempotentRequests): Router {
  const router = serviceRouter();
  router.get('/', async (req, res) => {
    const user = currentUser(req);
    res.json(ok(walletView(await wallets.open(user.id, user.ref))));
  });
  router.post(
    '/transfers',
    withInput({ body: CreateTransferBody }, async (input, req, res) => {
      const user = currentUser(req);
      const answer = await requests.run('transfer', user.id, req.header('idempotency-key'), req.body, async (attempt) => ({
        status: 200,
        body: ok(transferView(await transfers.create(user, input.body, attempt)), 'Transfer completed'),
      }));
      res.status(answer.status).json(answer.body);
    }),
  );
  return router;
}
