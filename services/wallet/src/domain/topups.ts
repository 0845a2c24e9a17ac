import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import {
  makeEvent,
  minorToMajor,
  newReference,
  type CreateTopUpBody,
  type TopUpCreated,
  type TopUpStatus,
  type TopUpStatusView,
} from '@mkt/contracts';
import { NotFound, type AuthenticatedUser, type Logger, type OutboxRelay } from '@mkt/kit';
import type { LedgerRelay } from '../db/ledger-relay';
import { TopUp, type TopUpDoc } from '../db/records.model';
import { Wallet, type WalletDoc } from '../db/wallet.model';
import type { PaymentProvider } from '../payments/provider';
import { assertOwnerOrAdmin, walletForPath } from './access';
import type { Limits } from './limits.service';
import { redirectAllowed } from './redirects';
import { AmountTooLarge, BalanceCeilingExceeded, RedirectNotAllowed } from './wallet.errors';
import { runWalletStep } from './wallet-step';

export interface TopUpSettings {
  referencePrefix: string;
  expiryMinutes: number;
  publicUrl: string;
  maxAmountMinor: number;
  ceilingMinor: number;
  redirectOrigins: readonly string[];
}

export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

function hashMatches(hash: string | null | undefined, token: string): boolean {
  if (!hash) return false;
  return timingSafeEqual(Buffer.from(hash, 'hex'), Buffer.from(hashToken(token), 'hex'));
}

/** Where the payer goes after the provider's page: on to the client, or a page of ours. */
export type ReturnTarget =
  { kind: 'redirect'; url: string; status: TopUpStatus } | { kind: 'page'; status: TopUpStatus } | { kind: 'unknown' };

export type CheckoutLookup =
  { kind: 'open'; topUp: TopUpDoc } | { kind: 'unknown' } | { kind: 'used'; status: TopUpStatus } | { kind: 'expired' };

/** Top-ups: created Processing with a checkout; completed (credited exactly once) or ended. */
export class TopUps {
  constructor(
    private readonly settings: TopUpSettings,
    private readonly provider: PaymentProvider,
    private readonly limits: Limits,
    private readonly outbox: OutboxRelay,
    private readonly ledger: LedgerRelay,
    private readonly log: Logger,
  ) {}

  async create(user: AuthenticatedUser, userRef: string, body: CreateTopUpBody): Promise<TopUpCreated> {
    if (body.amountMinor > this.settings.maxAmountMinor) throw new AmountTooLarge(this.settings.maxAmountMinor);
    if (!redirectAllowed(body.redirectUrl, this.settings.redirectOrigins)) throw new RedirectNotAllowed();
    const wallet = await walletForPath(user, userRef, this.settings.referencePrefix);
    if (!this.fits(wallet, body.amountMinor)) throw new BalanceCeilingExceeded();
    const release = await this.limits.reserve(wallet.userId);
    try {
      const id = randomUUID();
      const referenceId = newReference('TOP-UP', this.settings.referencePrefix);
      // The return address carries its own token: it outlives the checkout token (the payer
      // comes back after paying) and only whoever had the payment link knows it.
      const returnToken = randomBytes(24).toString('base64url');
      const session = await this.provider.initialize({
        referenceId,
        amountMinor: body.amountMinor,
        currency: wallet.currency,
        email: user.email,
        fullName: user.name,
        returnUrl: `${this.settings.publicUrl}/wallets/checkout/${referenceId}/return?token=${returnToken}`,
      });
      const topUp = await TopUp.create({
        _id: id,
        referenceId,
        walletId: wallet._id,
        userId: wallet.userId,
        amountMinor: body.amountMinor,
        currency: wallet.currency,
        paymentMethod: body.paymentMethod,
        provider: this.provider.name,
        status: 'Processing',
        paymentUrl: session.paymentUrl,
        redirectUrl: body.redirectUrl,
        notes: body.notes ?? null,
        checkoutTokenHash: session.checkoutToken ? hashToken(session.checkoutToken) : null,
        returnTokenHash: hashToken(returnToken),
        expiresAt: new Date(Date.now() + this.settings.expiryMinutes * 60_000),
      });
      this.log.info({ topUpId: id, referenceId, amountMinor: body.amountMinor }, 'top-up created');
      return {
        id,
        referenceId,
        amount: minorToMajor(topUp.amountMinor),
        status: topUp.status,
        paymentMethod: topUp.paymentMethod,
        paymentUrl: topUp.paymentUrl,
        createdAt: topUp.createdAt.toISOString(),
        wallet: { referenceId: wallet.referenceId, etbAvailableBalance: minorToMajor(wallet.availableMinor) },
      };
    } catch (err) {
      await release();
      throw err;
    }
  }

  async status(user: AuthenticatedUser, referenceId: string): Promise<TopUpStatusView> {
    const topUp = await this.find(referenceId);
    assertOwnerOrAdmin(user, topUp.userId);
    return {
      referenceId: topUp.referenceId,
      amount: minorToMajor(topUp.amountMinor),
      status: topUp.status,
      paymentMethod: topUp.paymentMethod,
      completedAt: topUp.completedAt?.toISOString() ?? null,
    };
  }

  /** What the checkout link opens to. */
  async checkout(referenceId: string, token: string): Promise<CheckoutLookup> {
    const topUp = await TopUp.findOne({ referenceId }).lean<TopUpDoc>();
    if (!topUp || topUp.provider !== 'sandbox') return { kind: 'unknown' };
    if (topUp.status !== 'Processing') return topUp.status === 'Expired' ? { kind: 'expired' } : { kind: 'used', status: topUp.status };
    if (!hashMatches(topUp.checkoutTokenHash, token)) return { kind: 'unknown' };
    if (topUp.expiresAt.getTime() <= Date.now()) return { kind: 'expired' };
    return { kind: 'open', topUp };
  }

  /**
   * The sandbox's Pay button: a payment that would take the wallet past its ceiling is refused
   * (Failed) before anything is credited; otherwise the top-up completes.
   */
  async payInSandbox(topUp: TopUpDoc, correlationId: string): Promise<void> {
    const wallet = await Wallet.findById(topUp.walletId).lean<WalletDoc>();
    if (!wallet || !this.fits(wallet, topUp.amountMinor)) {
      this.log.warn({ topUpId: topUp._id }, 'top-up refused: the balance would pass its ceiling');
      await this.end(topUp._id, 'Failed');
      return;
    }
    await this.complete(topUp._id, correlationId);
  }

  /** Where `/return` sends the payer: only with the return token, only to an allowed origin. */
  async returnTarget(referenceId: string, token: string | undefined): Promise<ReturnTarget> {
    const topUp = await TopUp.findOne({ referenceId }).lean<TopUpDoc>();
    if (!topUp || !token || !hashMatches(topUp.returnTokenHash, token)) return { kind: 'unknown' };
    if (!redirectAllowed(topUp.redirectUrl, this.settings.redirectOrigins)) return { kind: 'page', status: topUp.status };
    return { kind: 'redirect', url: topUp.redirectUrl, status: topUp.status };
  }

  private fits(wallet: Pick<WalletDoc, 'availableMinor' | 'heldMinor'>, amountMinor: number): boolean {
    return wallet.availableMinor + wallet.heldMinor + amountMinor <= this.settings.ceilingMinor;
  }

  /**
   * Processing (or Expired, when the provider says it was paid after all) → Completed, with
   * its event, in one write; then the credit. Whoever wins the transition credits; a repeat
   * (webhook twice, page and webhook) finds it Completed and does nothing.
   */
  async complete(topUpId: string, correlationId: string, from: TopUpStatus[] = ['Processing']): Promise<TopUpDoc | null> {
    const current = await TopUp.findById(topUpId).lean<TopUpDoc>();
    if (!current) return null;
    const event = makeEvent(
      'wallet.topup.completed',
      {
        reference: current.referenceId,
        userId: current.userId,
        amountMinor: current.amountMinor,
        currency: current.currency,
        status: 'Completed',
      },
      { source: 'wallet', correlationId },
    );
    const completed = await TopUp.findOneAndUpdate(
      { _id: topUpId, status: { $in: from } },
      {
        $set: { status: 'Completed', completedAt: new Date(), credit: 'pending', checkoutTokenHash: null },
        $push: { pendingEvents: event },
      },
      { new: true },
    ).lean<TopUpDoc>();
    if (!completed) return TopUp.findById(topUpId).lean<TopUpDoc>();
    this.log.info({ topUpId, amountMinor: completed.amountMinor }, 'top-up completed');
    void this.outbox.flush(TopUp, topUpId);
    try {
      await this.credit(completed);
    } catch (err) {
      if (!(err instanceof BalanceCeilingExceeded)) throw err;
      // Paid at the provider but no room in the wallet: the credit stays owed and the sweep
      // retries it (after a payout makes room); never dropped, never over the ceiling.
      this.log.error({ topUpId, amountMinor: completed.amountMinor }, 'top-up credit waits: the balance would pass its ceiling');
      return completed;
    }
    return { ...completed, credit: 'done' };
  }

  /** Ends a Processing top-up without money (Failed, Cancelled, Expired). */
  async end(topUpId: string, status: 'Failed' | 'Cancelled' | 'Expired'): Promise<void> {
    await TopUp.updateOne({ _id: topUpId, status: 'Processing' }, { $set: { status, checkoutTokenHash: null } });
  }

  /** The credit step; safe to repeat until the top-up records it. */
  async credit(topUp: TopUpDoc): Promise<void> {
    const op = {
      opId: `topup:${topUp._id}:credit`,
      type: 'topup_credit' as const,
      availableDeltaMinor: topUp.amountMinor,
      heldDeltaMinor: 0,
      reference: topUp.referenceId,
      ceilingMinor: this.settings.ceilingMinor,
    };
    await runWalletStep(this.ledger, topUp.walletId, op, () =>
      TopUp.updateOne({ _id: topUp._id, credit: 'pending' }, { $set: { credit: 'done' } }),
    );
  }

  /**
   * Asks the provider what happened (a webhook is only a hint to ask): paid, with the amount and
   * currency we asked for → Completed; failed → Failed; otherwise unchanged.
   */
  async settleWithProvider(referenceId: string, correlationId: string): Promise<TopUpDoc> {
    const topUp = await this.find(referenceId);
    if (topUp.provider !== this.provider.name || (topUp.status !== 'Processing' && topUp.status !== 'Expired')) return topUp;
    const verdict = await this.provider.verify(topUp.referenceId);
    if (verdict.status === 'success') {
      if (verdict.amountMinor === topUp.amountMinor && (verdict.currency ?? topUp.currency) === topUp.currency) {
        return (await this.complete(topUp._id, correlationId, ['Processing', 'Expired'])) ?? topUp;
      }
      this.log.error({ topUpId: topUp._id, verdict }, 'provider reports another amount; left for review');
    } else if (verdict.status === 'failed') {
      await this.end(topUp._id, 'Failed');
    }
    return this.find(referenceId);
  }

  /** Credits what a crash left, asks the provider about old Processing ones, expires the abandoned. */
  async reconcile(now = new Date()): Promise<void> {
    for (const topUp of await TopUp.find({ credit: 'pending' }).limit(100).lean<TopUpDoc[]>()) {
      await this.credit(topUp).catch((err: unknown) => {
        if (!(err instanceof BalanceCeilingExceeded)) throw err;
        this.log.error({ topUpId: topUp._id }, 'top-up credit still waits: the balance would pass its ceiling');
      });
    }
    const stale = await TopUp.find({ status: 'Processing', createdAt: { $lt: new Date(now.getTime() - 60_000) } })
      .limit(100)
      .lean<TopUpDoc[]>();
    for (const topUp of stale) {
      const settled = await this.settleWithProvider(topUp.referenceId, randomUUID());
      if (settled.status === 'Processing' && settled.expiresAt <= now) await this.end(topUp._id, 'Expired');
    }
  }

  async find(referenceId: string): Promise<TopUpDoc> {
    const topUp = await TopUp.findOne({ referenceId }).lean<TopUpDoc>();
    if (!topUp) throw new NotFound('Top-up');
    return topUp;
  }
}
