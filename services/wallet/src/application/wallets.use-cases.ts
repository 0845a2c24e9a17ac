import { NotFound } from '@mkt/kit/domain';
import type { AuthenticatedUser } from '@mkt/kit/http';
import type { WalletIdentity, WalletRepository } from '../db/wallet.repository';
import { pathAccess } from '../domain/access';
import type { WalletSummary } from '../domain/records';

/** Wallets as their owners (and admins) reach them. */
export class Wallets {
  constructor(
    private readonly wallets: WalletRepository,
    readonly referencePrefix: string,
  ) {}

  /** The wallet a path names: the caller's own (opened on first use), or anyone's for an admin (404 when none). */
  async walletForPath(user: AuthenticatedUser, userRef: string): Promise<WalletSummary> {
    if (pathAccess(user, userRef) === 'own') return this.open(user.id, user.ref);
    const wallet = await this.wallets.find({ userRef });
    if (!wallet) throw new NotFound('Wallet');
    return wallet;
  }

  /** A user's wallet's id and currency, opened on first use; read once per process (`WalletRepository.identityOf`). */
  identityOf(userId: string, userRef: string): Promise<WalletIdentity> {
    return this.wallets.identityOf(userId, userRef, this.referencePrefix);
  }

  /** A user's wallet, opened on first use (a request, or the registration event). */
  open(userId: string, userRef: string): Promise<WalletSummary> {
    return this.wallets.open(userId, userRef, this.referencePrefix);
  }
}
