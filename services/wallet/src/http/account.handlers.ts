import { OPERATIONS, ok } from '@mkt/contracts';
import { currentUser, handle, someOperationHandlers, type IdempotentRequests, type MountOptions } from '@mkt/kit';
import type { Limits } from '../application/limits';
import type { Transfers } from '../application/transfers';
import type { Wallets } from '../application/wallets';
import { BANKS } from '../domain/banks';
import type { TransferDoc } from '../domain/records';
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
export function accountHandlers(
  wallets: Wallets,
  transfers: Transfers,
  limits: Limits,
  requests: IdempotentRequests,
): MountOptions['handlers'] {
  return {
    'GET /wallets/banks': handle({}, (_input, _req, res) => {
      res.json(ok(BANKS, 'Banks retrieved'));
    }),
    'GET /wallets/rate-limit/stats': handle({}, async (_input, req, res) => {
      res.json(ok(await limits.stats(currentUser(req).id), 'Rate limit statistics'));
    }),
    'GET /v1/wallet': handle({}, async (_input, req, res) => {
      const user = currentUser(req);
      res.json(ok(walletView(await wallets.open(user.id, user.ref))));
    }),
    // Keyed (the entry is idempotent): kit runs it once per Idempotency-Key, under the records' scope `transfer`.
    ...someOperationHandlers(
      OPERATIONS,
      { createTransfer: async ({ body }, { user, attempt }) => transferAnswer(await transfers.create(user, body, attempt)) },
      { idempotency: { requests, scopes: { createTransfer: 'transfer' } } },
    ),
  };
}
