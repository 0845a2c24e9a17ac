import { sendReceiptPage } from '@mkt/kit/http';
import type { TopUps } from '../application/topups.use-cases';
import type { WalletOperations } from './operations';
import { topUpCreatedView, topUpReceiptDocument, topUpReceiptView, topUpStatusView } from './views';

/** A top-up: the keyed create (hosted checkout), its status, and a completed one's receipt. */
export function topUpOperations(
  topUps: TopUps,
  merchant: string,
): WalletOperations<'createTopup' | 'getTopupStatus' | 'getTopupReceipt' | 'getTopupReceiptPage'> {
  return {
    // Keyed (the entry is idempotent): kit runs it once per Idempotency-Key, under the records' scope `topup`.
    createTopup: async ({ params, body }, { user }) => ({
      data: topUpCreatedView(await topUps.create(user, params.userReferenceId, body)),
      message: 'Top-up created',
    }),
    // A completed top-up's receipt, as JSON and as a printable page (its owner or an admin).
    getTopupReceipt: async ({ params }, { res, user }) => {
      const { topUp, walletReferenceId } = await topUps.receipt(user, params.walletReferenceId);
      res.set('Cache-Control', 'private, no-store');
      return { data: topUpReceiptView(topUp, walletReferenceId) };
    },
    getTopupReceiptPage: async ({ params }, { res, user }) => {
      const { topUp, walletReferenceId } = await topUps.receipt(user, params.walletReferenceId);
      sendReceiptPage(res, topUpReceiptDocument(topUpReceiptView(topUp, walletReferenceId), merchant));
    },
    getTopupStatus: async ({ params }, { user }) => ({ data: topUpStatusView(await topUps.statusOf(user, params.walletReferenceId)) }),
  };
}
