import { OPERATIONS, TopUpRefParams, ok } from '@mkt/contracts';
import { currentUser, handle, sendReceiptPage, someOperationHandlers, type IdempotentRequests, type MountOptions } from '@mkt/kit';
import type { TopUps } from '../application/topups';
import { topUpCreatedView, topUpReceiptDocument, topUpReceiptView, topUpStatusView } from './views';

export function topUpHandlers(topUps: TopUps, requests: IdempotentRequests, merchant: string): MountOptions['handlers'] {
  return {
    // Keyed (the entry is idempotent): kit runs it once per Idempotency-Key, under the records' scope `topup`.
    ...someOperationHandlers(
      OPERATIONS,
      {
        createTopup: async ({ params, body }, { user }) => ({
          data: topUpCreatedView(await topUps.create(user, params.userReferenceId, body)),
          message: 'Top-up created',
        }),
      },
      { idempotency: { requests, scopes: { createTopup: 'topup' } } },
    ),
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
