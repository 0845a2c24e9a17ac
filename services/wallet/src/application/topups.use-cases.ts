import { randomBytes, randomUUID } from 'node:crypto';
import { newReference, type CreateTopUpBody, type TopUpStatus } from '@mkt/contracts/wallet';
import { defineFlow, kindStep, resumeFlow, runFlow } from '@mkt/kit/steps';
import { NotFound } from '@mkt/kit/domain';
import type { AuthenticatedUser } from '@mkt/kit/http';
import type { Logger } from '@mkt/kit/logger';
import type { TopUpRepository } from '../db/topup.repository';
import type { WalletRepository } from '../db/wallet.repository';
import { assertOwnerOrAdmin } from '../domain/access';
import { receiptableTopUp, type ReceiptableTopUp } from '../domain/receipts';
import type { TopUpDoc, WalletSummary } from '../domain/records';
import {
  ASK_PROVIDER_AFTER_MS,
  askProvider,
  checkoutLookup,
  checkTopUpFits,
  checkTopUpRequest,
  completedEvent,
  hashToken,
  isExpired,
  returnTarget,
  topUpCreditOp,
  verdictOf,
  type CheckoutLookup,
  type ReturnTarget,
  type TopUpSettings,
} from '../domain/topups';
import { fitsUnder } from '../domain/wallet-ops';
import { BalanceCeilingExceeded } from '../domain/errors';
import type { PaymentProvider } from '../payments/provider';
import type { Limits } from './limits.use-cases';
import { stepStatus, type WalletSteps } from './wallet.steps';
import type { Wallets } from './wallets.use-cases';

export interface TopUpCreatedResult {
  topUp: TopUpDoc;
  wallet: WalletSummary;
}

/** Top-ups: created Processing with a checkout; completed (credited exactly once) or ended. */
export class TopUps {
  /** One step, `credit`: owed from the completing write on, recorded on the top-up. */
  private readonly flow;

  constructor(
    private readonly settings: TopUpSettings,
    private readonly provider: PaymentProvider,
    private readonly limits: Limits,
    private readonly topUps: TopUpRepository,
    private readonly wallets: WalletRepository,
    private readonly access: Wallets,
    steps: WalletSteps,
    private readonly log: Logger,
  ) {
    this.flow = defineFlow<TopUpDoc>('topup', [
      kindStep(steps, {
        name: 'credit',
        opId: (topUp) => `topup:${topUp._id}:credit`,
        status: (topUp) => stepStatus(topUp.credit),
        work: (topUp) => ({ walletId: topUp.walletId, op: topUpCreditOp(topUp, settings.ceilingMinor) }),
        record: async (topUp) => {
          await this.topUps.recordCredit(topUp._id);
          return { ...topUp, credit: 'done' };
        },
        // Paid at the provider but no room in the wallet: the credit stays owed and the sweep
        // retries it (after a payout makes room); never dropped, never over the ceiling.
        waitsOn: (err) => err instanceof BalanceCeilingExceeded,
      }),
    ]);
  }

  async create(user: AuthenticatedUser, userRef: string, body: CreateTopUpBody): Promise<TopUpCreatedResult> {
    checkTopUpRequest(body, this.settings);
    const wallet = await this.access.walletForPath(user, userRef);
    checkTopUpFits(wallet, body.amountMinor, this.settings.ceilingMinor);
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
      const topUp = await this.topUps.create({
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
      return { topUp, wallet };
    } catch (err) {
      await release();
      throw err;
    }
  }

  /** A top-up as its owner or an admin may read it. */
  async statusOf(user: AuthenticatedUser, referenceId: string): Promise<TopUpDoc> {
    const topUp = await this.find(referenceId);
    assertOwnerOrAdmin(user, topUp.userId);
    return topUp;
  }

  /** A completed top-up's receipt, with the reference of the wallet it credited (its owner or an admin; others 404). */
  async receipt(user: AuthenticatedUser, referenceId: string): Promise<{ topUp: ReceiptableTopUp; walletReferenceId: string }> {
    const topUp = receiptableTopUp(user, await this.topUps.findByReference(referenceId));
    const wallet = await this.wallets.findById(topUp.walletId);
    if (!wallet) throw new NotFound('Top-up');
    return { topUp, walletReferenceId: wallet.referenceId };
  }

  /** What the checkout link opens to. */
  async checkout(referenceId: string, token: string, now = new Date()): Promise<CheckoutLookup> {
    return checkoutLookup(await this.topUps.findByReference(referenceId), token, now);
  }

  /**
   * The sandbox's Pay button: a payment that would take the wallet past its ceiling is refused
   * (Failed) before anything is credited; otherwise the top-up completes.
   */
  async payInSandbox(topUp: TopUpDoc, correlationId: string): Promise<void> {
    const wallet = await this.wallets.findById(topUp.walletId);
    if (!wallet || !fitsUnder(wallet, topUp.amountMinor, this.settings.ceilingMinor)) {
      this.log.warn({ topUpId: topUp._id }, 'top-up refused: the balance would pass its ceiling');
      await this.end(topUp._id, 'Failed');
      return;
    }
    await this.complete(topUp._id, correlationId);
  }

  /** Where `/return` sends the payer: only with the return token, only to an allowed origin. */
  async returnTarget(referenceId: string, token: string | undefined): Promise<ReturnTarget> {
    return returnTarget(await this.topUps.findByReference(referenceId), token, this.settings.redirectOrigins);
  }

  /**
   * Processing (or Expired, when the provider says it was paid after all) → Completed, with
   * its event, in one write; then the credit. Whoever wins the transition credits; a repeat
   * (webhook twice, page and webhook) finds it Completed and does nothing.
   */
  async complete(topUpId: string, correlationId: string, from: TopUpStatus[] = ['Processing']): Promise<TopUpDoc | null> {
    const current = await this.topUps.findById(topUpId);
    if (!current) return null;
    const completed = await this.topUps.complete(topUpId, from, completedEvent(current, correlationId), new Date());
    if (!completed) return this.topUps.findById(topUpId);
    this.log.info({ topUpId, amountMinor: completed.amountMinor }, 'top-up completed');
    const run = await runFlow(this.flow, completed);
    if (run.stoppedAt)
      this.log.error({ topUpId, amountMinor: completed.amountMinor }, 'top-up credit waits: the balance would pass its ceiling');
    return run.record;
  }

  /** Ends a Processing top-up without money (Failed, Cancelled, Expired). */
  async end(topUpId: string, status: 'Failed' | 'Cancelled' | 'Expired'): Promise<void> {
    await this.topUps.end(topUpId, status);
  }

  /**
   * Asks the provider what happened (a webhook is only a hint to ask): paid, with the amount and
   * currency we asked for → Completed; failed → Failed; otherwise unchanged.
   */
  async settleWithProvider(referenceId: string, correlationId: string): Promise<TopUpDoc> {
    const topUp = await this.find(referenceId);
    if (!askProvider(topUp, this.provider.name)) return topUp;
    const verification = await this.provider.verify(topUp.referenceId);
    const verdict = verdictOf(topUp, verification);
    if (verdict === 'complete') return (await this.complete(topUp._id, correlationId, ['Processing', 'Expired'])) ?? topUp;
    if (verdict === 'review')
      this.log.error({ topUpId: topUp._id, verdict: verification }, 'provider reports another amount; left for review');
    if (verdict === 'fail') await this.end(topUp._id, 'Failed');
    return this.find(referenceId);
  }

  /** Credits what a crash left (the runner resumes the flow), asks the provider about old Processing ones, expires the abandoned. */
  async reconcile(now = new Date()): Promise<void> {
    for (const run of await resumeFlow(this.flow, { unfinished: () => this.topUps.creditOwed() }))
      if (run.stoppedAt) this.log.error({ topUpId: run.record._id }, 'top-up credit still waits: the balance would pass its ceiling');
    for (const topUp of await this.topUps.processingSince(new Date(now.getTime() - ASK_PROVIDER_AFTER_MS))) {
      const settled = await this.settleWithProvider(topUp.referenceId, randomUUID());
      if (isExpired(settled, now)) await this.end(topUp._id, 'Expired');
    }
  }

  async find(referenceId: string): Promise<TopUpDoc> {
    const topUp = await this.topUps.findByReference(referenceId);
    if (!topUp) throw new NotFound('Top-up');
    return topUp;
  }
}
