import { randomUUID } from 'node:crypto';
import { formatMinor, makeEvent, newReference, type CreatePayoutBody, type PayoutCreated, type PayoutStatusView } from '@mkt/contracts';
import { Forbidden, InvalidState, NotFound, type AuthenticatedUser, type Logger, type OutboxRelay } from '@mkt/kit';
import type { LedgerRelay } from '../db/ledger-relay';
import { Payout, type PayoutDoc, type PayoutHistoryEntry } from '../db/records.model';
import { assertOwnerOrAdmin } from './access';
import { openWallet } from '../db/wallet.model';
import { accountNumberFits, activeBank } from './banks';
import type { Limits } from './limits.service';
import { holdOutcomeDeltas, payoutTransition, type PayoutMove } from './payout-states';
import { BadAccountNumber, InsufficientFunds, UnknownBank } from './wallet.errors';
import type { Attempt } from './idempotency';
import { runWalletStep } from './wallet-step';

const HOLD_GRACE_MS = 30_000;

function statusEvent(
  payout: Pick<PayoutDoc, 'referenceId' | 'userId' | 'amountMinor' | 'currency'>,
  status: string,
  correlationId: string,
) {
  return makeEvent(
    'wallet.payout.status_changed',
    { reference: payout.referenceId, userId: payout.userId, amountMinor: payout.amountMinor, currency: payout.currency, status },
    { source: 'wallet', correlationId },
  );
}

/** One line of a payout's audit trail: who did what, when, with which notes. */
function historyEntry(user: AuthenticatedUser, action: PayoutMove | 'request', from: string | null, to: string, notes: string | undefined) {
  return { action, from, to, byUserId: user.id, byRole: user.role, at: new Date(), notes: notes ?? null };
}

/**
 * A line of the trail as `viewer` may see it: an admin sees who made every move; the owner
 * sees the role of whoever moved their payout but not another user's id (an admin's id is not
 * theirs to know).
 */
function historyView(viewer: AuthenticatedUser, entry: PayoutHistoryEntry): PayoutStatusView['history'][number] {
  const byUserId = viewer.role === 'admin' || entry.byUserId === viewer.id ? entry.byUserId : null;
  return { ...entry, byUserId, at: entry.at.toISOString() };
}

/** Payout requests: the amount is held at creation and released or paid out at the end. */
function createdView(payout: PayoutDoc): PayoutCreated {
  return {
    id: payout._id,
    referenceId: payout.referenceId,
    requestedAmount: formatMinor(payout.amountMinor),
    status: payout.status,
    bankCode: payout.bankCode,
    accountNumber: payout.accountNumber,
    accountName: payout.accountName,
    reason: payout.reason,
    createdAt: payout.createdAt.toISOString(),
  };
}

export class Payouts {
  constructor(
    private readonly referencePrefix: string,
    private readonly limits: Limits,
    private readonly outbox: OutboxRelay,
    private readonly ledger: LedgerRelay,
    private readonly log: Logger,
  ) {}

  /**
   * A new payout with id `attempt.resourceId`. A retaken attempt (its first died before it
   * answered) finds the payout that attempt created, if any, and finishes its hold instead.
   */
  async create(
    user: AuthenticatedUser,
    userRef: string,
    body: CreatePayoutBody,
    correlationId: string,
    attempt?: Attempt,
  ): Promise<PayoutCreated> {
    const bank = activeBank(body.bankCode);
    if (!bank) throw new UnknownBank();
    if (!accountNumberFits(bank, body.accountNumber)) throw new BadAccountNumber(bank.account_length);
    // Only the owner asks for their money: an admin cannot request a payout from someone's wallet.
    if (user.ref !== userRef) throw new Forbidden('Only the wallet’s owner requests a payout');
    if (attempt?.retaken) {
      const earlier = await Payout.findOne({ _id: attempt.resourceId, userId: user.id }).lean<PayoutDoc>();
      if (earlier) return this.finishCreate(earlier);
    }
    const wallet = await openWallet(user.id, user.ref, this.referencePrefix);
    if (wallet.availableMinor < body.amountMinor) throw new InsufficientFunds();
    const release = await this.limits.reserve(wallet.userId);
    const id = attempt?.resourceId ?? randomUUID();
    const fields = {
      referenceId: newReference('PAY-REQ', this.referencePrefix),
      userId: wallet.userId,
      amountMinor: body.amountMinor,
      currency: wallet.currency,
    };
    let payout: PayoutDoc | null = null;
    try {
      payout = (
        await Payout.create({
          _id: id,
          ...fields,
          walletId: wallet._id,
          bankCode: bank.code,
          accountNumber: body.accountNumber,
          accountName: body.accountName,
          reason: body.reason,
          status: 'Pending',
          hold: 'pending',
          requestedBy: user.id,
          history: [historyEntry(user, 'request', null, 'Pending', undefined)],
          pendingEvents: [statusEvent(fields, 'Pending', correlationId)],
        })
      ).toObject();
      await this.hold(payout);
    } catch (err) {
      // Short of funds: nothing was held, so nothing is kept. Any other failure after the
      // record exists is left to `resume`, which finishes the hold it may have taken.
      if (err instanceof InsufficientFunds) await Payout.deleteOne({ _id: id, hold: 'pending' });
      if (err instanceof InsufficientFunds || !payout) await release();
      throw err;
    }
    void this.outbox.flush(Payout, id);
    this.log.info({ payoutId: id, amountMinor: body.amountMinor }, 'payout requested');
    return createdView(payout);
  }

  /** A payout an earlier attempt created: its hold finished (once, by op id), then its answer. */
  private async finishCreate(payout: PayoutDoc): Promise<PayoutCreated> {
    if (payout.hold === 'pending') {
      try {
        await this.hold(payout);
      } catch (err) {
        if (err instanceof InsufficientFunds) await Payout.deleteOne({ _id: payout._id, hold: 'pending' });
        throw err;
      }
    }
    void this.outbox.flush(Payout, payout._id);
    return createdView(payout);
  }

  async status(user: AuthenticatedUser, referenceId: string): Promise<PayoutStatusView> {
    const payout = await this.find(referenceId);
    assertOwnerOrAdmin(user, payout.userId);
    return {
      referenceId: payout.referenceId,
      requestedAmount: formatMinor(payout.amountMinor),
      status: payout.status,
      processedAt: payout.processedAt?.toISOString() ?? null,
      adminNotes: payout.adminNotes,
      history: (payout.history ?? []).map((entry) => historyView(user, entry)),
    };
  }

  /** Owner's cancel or an admin's move; the state guard is in the write, so racing moves: one wins. */
  async move(
    user: AuthenticatedUser,
    referenceId: string,
    move: PayoutMove,
    adminNotes: string | undefined,
    correlationId: string,
  ): Promise<PayoutDoc> {
    const payout = await this.find(referenceId);
    if (move === 'cancel') assertOwnerOrAdmin(user, payout.userId);
    else if (user.role !== 'admin') throw new Forbidden('Only an admin moves payout requests');
    // Four eyes: an admin never moves a payout of their own wallet.
    else if (user.id === payout.userId || user.id === payout.requestedBy)
      throw new Forbidden('Another admin must move a payout you requested');
    const transition = payoutTransition(move, payout.status);
    if (!transition) throw new InvalidState(`A ${payout.status} payout request cannot be moved by ${move}`);
    const set: Record<string, unknown> = { status: transition.to };
    if (transition.hold !== 'keep') set.finish = 'pending';
    if (move !== 'cancel') set.processedAt = new Date();
    if (adminNotes !== undefined && move !== 'cancel') set.adminNotes = adminNotes;
    const moved = await Payout.findOneAndUpdate(
      { _id: payout._id, status: transition.from, hold: 'done' },
      {
        $set: set,
        $push: {
          pendingEvents: statusEvent(payout, transition.to, correlationId),
          history: historyEntry(user, move, transition.from, transition.to, adminNotes),
        },
      },
      { new: true },
    ).lean<PayoutDoc>();
    if (!moved) throw new InvalidState(`The payout request is no longer ${transition.from}`);
    this.log.info(
      { payoutId: moved._id, move, from: transition.from, status: moved.status, byUserId: user.id, byRole: user.role, notes: adminNotes },
      'payout moved',
    );
    if (moved.finish === 'pending') await this.finish(moved);
    void this.outbox.flush(Payout, moved._id);
    return moved;
  }

  /** Finishes what a crash interrupted: holds not yet recorded, releases and settlements. */
  async resume(now = new Date()): Promise<void> {
    const cutoff = new Date(now.getTime() - HOLD_GRACE_MS);
    for (const payout of await Payout.find({ hold: 'pending', createdAt: { $lt: cutoff } })
      .limit(100)
      .lean<PayoutDoc[]>()) {
      try {
        await this.hold(payout);
      } catch (err) {
        if (!(err instanceof InsufficientFunds)) throw err;
        // Never acknowledged to the client (the request died before the hold): nothing to keep.
        await Payout.deleteOne({ _id: payout._id, hold: 'pending' });
      }
    }
    for (const payout of await Payout.find({ finish: 'pending' }).limit(100).lean<PayoutDoc[]>()) await this.finish(payout);
  }

  private async hold(payout: PayoutDoc): Promise<void> {
    const op = {
      opId: `payout:${payout._id}:hold`,
      type: 'payout_hold' as const,
      availableDeltaMinor: -payout.amountMinor,
      heldDeltaMinor: payout.amountMinor,
      reference: payout.referenceId,
    };
    await runWalletStep(this.ledger, payout.walletId, op, () =>
      Payout.updateOne({ _id: payout._id, hold: 'pending' }, { $set: { hold: 'done' } }),
    );
  }

  private async finish(payout: PayoutDoc): Promise<void> {
    const outcome = payout.status === 'Completed' ? 'settle' : 'release';
    const op = {
      opId: `payout:${payout._id}:${outcome}`,
      type: outcome === 'settle' ? ('payout_settle' as const) : ('payout_release' as const),
      ...holdOutcomeDeltas(outcome, payout.amountMinor),
      reference: payout.referenceId,
    };
    await runWalletStep(this.ledger, payout.walletId, op, () =>
      Payout.updateOne({ _id: payout._id, finish: 'pending' }, { $set: { finish: 'done' } }),
    );
  }

  private async find(referenceId: string): Promise<PayoutDoc> {
    const payout = await Payout.findOne({ referenceId, hold: 'done' }).lean<PayoutDoc>();
    if (!payout) throw new NotFound('Payout request');
    return payout;
  }
}
