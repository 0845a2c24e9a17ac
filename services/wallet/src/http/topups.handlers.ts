import { CreateTopUpBody, TopUpRefParams, UserRefParams, ok } from '@mkt/contracts';
import { currentUser, handle, sendReceiptPage, type IdempotentRequests, type MountOptions } from '@mkt/kit';
import type { TopUps } from '../application/topups';
import { topUpCreatedView, topUpReceiptDocument, topUpReceiptView, topUpStatusView } from './views';

export function topUpHandlers(topUps: TopUps, requests: IdempotentRequests, merchant: string): MountOptions['handlers'] {
  return {
    'POST /wallets/users/{userReferenceId}/topup': handle({ params: UserRefParams, body: CreateTopUpBody }, async (input, req, res) => {
      const user = currentUser(req);
      const { userReferenceId } = input.params;
      const answer = await requests.run('topup', user.id, req.header('idempotency-key'), { userReferenceId, body: req.body }, async () => ({
        status: 200,
        body: ok(topUpCreatedView(await topUps.create(user, userReferenceId, input.body)), 'Top-up created'),
      }));
      res.status(answer.status).json(answer.body);
    }),
    // A completed top-up's receipt, as JSON and as a printable page (its owner or an admin).
    'GET /v1/wallet/topups/{walletReferenceId}/receipt': handle({ params: TopUpRefParams }, async (input, req, res) => {
      const { topUp, walletReferenceId } = await topUps.receipt(currentUser(req), input.params.walletReferenceId);
      res.set('Cache-Control', 'private, no-store').json(ok(topUpReceiptView(topUp, walletReferenceId)));
    }),
    'GET /v1/wallet/topups/{walletReferenceId}/receipt.html': handle({ params: TopUpRefParams }, async (input, req, res) => {
      const { topUp, walletReferenceId } = await topUps.receipt(currentUser(req), input.params.walletReferenceId);
      sendReceiptPage(res, topUpReceiptDocument(topUpReceiptView(topUp, walletReferenceId), merchant));
    }),
    'GET /wallets/topup/{walletReferenceId}/status': handle({ params: TopUpRefParams }, async (input, req, res) => {
      res.json(ok(topUpStatusView(await topUps.statusOf(currentUser(req), input.params.walletReferenceId))));
    }),
  };
}
