import type { Limits } from '../application/limits.use-cases';
import type { Transfers } from '../application/transfers.use-cases';
import type { Wallets } from '../application/wallets.use-cases';
import { BANKS } from '../domain/banks';
import type { TransferDoc } from '../domain/records';
import type { WalletOperations } from './operations';
import { transferView, walletView } from './views';

/**
 * A transfer's answer says what happened: Completed, or Debited with its credit still owed (no
 * room under the recipient's ceiling yet; the sweep applies it once there is).
 */
function transferAnswer(transfer: TransferDoc) {
  return {
    data: transferView(transfer),
    message: transfer.status === 'Completed' ? 'Transfer completed' : 'Transfer debited; credit pending',
  };
}

/** `GET /wallets/banks`, `GET /wallets/rate-limit/stats`, `GET /v1/wallet`, `POST /v1/wallet/transfers` (integer minor units). */
export function accountOperations(
  wallets: Wallets,
  transfers: Transfers,
  limits: Limits,
): WalletOperations<'listBanks' | 'getRateLimitStats' | 'getWallet' | 'createTransfer'> {
  return {
    listBanks: () => ({ data: [...BANKS], message: 'Banks retrieved' }),
    getRateLimitStats: async (_input, { user }) => ({ data: await limits.stats(user.id), message: 'Rate limit statistics' }),
    getWallet: async (_input, { user }) => ({ data: walletView(await wallets.open(user.id, user.ref)) }),
    // Keyed (the entry is idempotent): kit runs it once per Idempotency-Key, under the records' scope `transfer`.
    createTransfer: async ({ body }, { user, attempt }) => transferAnswer(await transfers.create(user, body, attempt)),
  };
}
