import { minorToMajor, type WalletView } from '@mkt/contracts';
import { Forbidden, NotFound, type AuthenticatedUser } from '@mkt/kit';
import { findWallet, openWallet, type WalletSummary } from '../db/wallet.model';

/**
 * The wallet a path names by its owner's USR reference: the caller's own (opened on first use),
 * or anyone's for an admin (404 when that user has none). Anybody else: 403.
 */
export async function walletForPath(user: AuthenticatedUser, userRef: string, referencePrefix: string): Promise<WalletSummary> {
  if (user.ref === userRef) return openWallet(user.id, user.ref, referencePrefix);
  if (user.role !== 'admin') throw new Forbidden('This wallet belongs to someone else');
  const wallet = await findWallet({ userRef });
  if (!wallet) throw new NotFound('Wallet');
  return wallet;
}

/** A record of a wallet's owner: its owner or an admin may see it; others get 403. */
export function assertOwnerOrAdmin(user: AuthenticatedUser, ownerId: string): void {
  if (user.role !== 'admin' && user.id !== ownerId) throw new Forbidden('This record belongs to someone else');
}

/** `GET /v1/wallet`: the caller's wallet (opened on first use), in major units. */
export async function ownWalletView(user: AuthenticatedUser, referencePrefix: string): Promise<WalletView> {
  const wallet = await openWallet(user.id, user.ref, referencePrefix);
  return {
    id: wallet._id,
    referenceId: wallet.referenceId,
    userId: wallet.userId,
    currency: wallet.currency,
    etbAvailableBalance: minorToMajor(wallet.availableMinor),
    heldBalance: minorToMajor(wallet.heldMinor),
  };
}
