import type { CreateBookingHoldBody } from '@mkt/contracts';
import { Conflict, InvalidState, isDuplicateKey, NotFound, type AuthenticatedUser, type Logger, type OutboxRelay } from '@mkt/kit';
import {
  BookingHold,
  type BookingHoldDoc,
  type BookingHoldHistoryEntry,
  type Settlement,
  type SettlementKind,
} from '../db/booking-hold.model';
import type { LedgerRelay } from '../db/ledger-relay';
import { dropWalletOps, findWallet, FORGET_OPS_AFTER_MS, openWallet, Wallet, type WalletDoc, type WalletOp } from '../db/wallet.model';
import { applyOp } from './wallet-step';
import { isSettlementDue, settlementDueAt, settlementEvent, settlementOf } from './settlement';
import { BalanceCeilingExceeded, CurrencyMismatch, InsufficientFunds } from './wallet.errors';

export interface BookingHoldSettings {
  referencePrefix: string;
  ceilingMinor: number;
  /** Platform fee on what the seller receives, in basis points (100 = 1 %). */
  feeBps: number;
}

/** Steps left by a crash are resumed after this long (a live request finishes well before). */
const RESUME_GRACE_MS = 30_000;
/** A hold whose request died before it was recorded is given up after this (the consultation voids first). */
const ABANDON_AFTER_MS = 60 * 60_000;
/** Ended holds are checked for a hold op applied after their end for this long. */
const STRAY_WINDOW_MS = 24 * 3_600_000;

/**
 * The correlation id a sweep carries a hold's late steps on: the decision's, else the
 * booking's; a hold from before either was stored has only its booking id.
 */
const correlationIdOf = (record: BookingHoldDoc) => record.settlement?.correlationId ?? record.correlationId ?? record._id;

const holdOpId = (bookingId: string) => `booking:${bookingId}:hold`;
const unholdOpId = (bookingId: string) => `booking:${bookingId}:unhold`;
export const PLATFORM_USER_ID = 'platform';

/**
 * The money of paid bookings. A hold moves the total from the buyer's available to held
 * balance (idempotent by booking); it ends once, by a settlement decided in one conditional
 * write: capture (delivered: all to the seller, less the platform fee), cancel (the refund back
 * to the buyer, the rest to the seller) or void (never confirmed: all back). Each money step
 * is applied by its op id and recorded on the hold; `resume` finishes what a crash left.
 */
export class BookingHolds {
  constructor(
    private readonly settings: BookingHoldSettings,
    private readonly outbox: OutboxRelay,
    private readonly ledger: LedgerRelay,
    private readonly log: Logger,
  ) {}

  /**
   * Holds the booking's total on the buyer's wallet, once; a repeat answers the same.
   * `correlationId` is the booking's (consultation's): the hold's events and logs carry it.
   */
  async hold(body: CreateBookingHoldBody, correlationId: string): Promise<BookingHoldDoc> {
    const wallet = await openWallet(body.buyerId, body.buyerRef, this.settings.referencePrefix);
    if (wallet.currency !== body.currency) throw new CurrencyMismatch(wallet.currency);
    const record = await this.upsert(body.bookingId, {
      buyerId: body.buyerId,
      buyerWalletId: wallet._id,
      sellerId: body.sellerId,
      amountMinor: body.amountMinor,
      currency: body.currency,
      status: 'Pending',
      hold: 'pending',
      endsAt: body.endsAt ? new Date(body.endsAt) : null,
      correlationId,
    });
    if (record.status === 'Voided') return record;
    if (record.buyerId !== body.buyerId || record.sellerId !== body.sellerId || record.amountMinor !== body.amountMinor)
      throw new Conflict('This booking already has a hold with other terms');
    return record.status === 'Pending' ? this.takeHold(record) : record;
  }

  /**
   * The consultation gave the booking up (its payment never confirmed in time): whatever was
   * held goes back, and a hold request arriving later finds the booking voided.
   */
  async void(bookingId: string, correlationId: string): Promise<BookingHoldDoc> {
    let record = await this.upsert(bookingId, { buyerId: '', sellerId: '', amountMinor: 0, currency: '', status: 'Voided' });
    if (record.status === 'Pending') {
      await BookingHold.updateOne({ _id: bookingId, status: 'Pending' }, { $set: { status: 'Voided' } });
      record = (await this.find(bookingId))!;
      if (record.status === 'Voided') await this.unholdIfApplied(record);
    }
    if (record.status === 'Held') record = await this.settle(bookingId, 'void', 0, correlationId);
    if (record.settlement && record.settlement.kind !== 'void') throw new Conflict('The booking’s payment has already been settled');
    return (await this.find(bookingId))!;
  }

  /**
   * Decides how a Held hold ends (the first decision wins; a repeat or a later event changes
   * nothing) and carries the settlement out — a capture decided before the slot's end only
   * once it has passed (`dueAt`, the sweep moves it). The decision stands meanwhile: a
   * cancellation or a void arriving between changes nothing.
   */
  async settle(
    bookingId: string,
    kind: SettlementKind,
    requestedRefundMinor: number,
    correlationId: string,
    now = new Date(),
  ): Promise<BookingHoldDoc> {
    const current = await this.find(bookingId);
    if (!current) throw new NotFound('Hold');
    if (current.status === 'Held') {
      const split = settlementOf(kind, current.amountMinor, requestedRefundMinor, this.settings.feeBps);
      await this.decide(bookingId, { ...split, decidedAt: now, correlationId }, settlementDueAt(kind, current.endsAt ?? null, now));
    }
    const decided = (await this.find(bookingId))!;
    if (decided.status !== 'Settling') return decided;
    if (!isSettlementDue(decided.dueAt ?? null, now))
      this.log.info({ bookingId, correlationId, dueAt: decided.dueAt }, 'capture decided before the slot ends: the money moves then');
    return this.carryOn(decided, correlationId, now);
  }

  /**
   * An admin's last resort for a hold that never ends: the whole amount back to the buyer, the
   * admin and the reason on the hold's history, and `wallet.booking_refund.completed` with
   * `voidedByAdmin` (the consultation cancels the booking from it). Only a Held hold: one
   * already decided (a capture waiting for the slot's end included), settling or settled is
   * 409 — the guard is in the write, so a racing event and the admin cannot both decide.
   */
  async voidByAdmin(bookingId: string, admin: AuthenticatedUser, reason: string, correlationId: string): Promise<BookingHoldDoc> {
    const current = await this.find(bookingId);
    if (!current) throw new NotFound('Hold');
    const now = new Date();
    const split = settlementOf('void', current.amountMinor, 0, this.settings.feeBps);
    const decided =
      current.status === 'Held' &&
      (await this.decide(bookingId, { ...split, decidedAt: now, correlationId, byAdmin: true }, null, {
        action: 'void',
        by: admin.id,
        at: now,
        reason,
      }));
    if (!decided) throw new InvalidState(`Only a Held hold can be voided; this one is ${(await this.find(bookingId))!.status}`);
    this.log.warn({ bookingId, adminId: admin.id, correlationId, amountMinor: current.amountMinor, reason }, 'hold voided by an admin');
    return this.carryOn((await this.find(bookingId))!, correlationId, now);
  }

  async get(bookingId: string): Promise<BookingHoldDoc> {
    const record = await this.find(bookingId);
    if (!record) throw new NotFound('Hold');
    return record;
  }

  async find(bookingId: string): Promise<BookingHoldDoc | null> {
    return BookingHold.findById(bookingId).lean<BookingHoldDoc>();
  }

  /** Finishes settlements a crash interrupted and gives back holds whose record never took them. */
  async resume(now = new Date()): Promise<void> {
    const cutoff = new Date(now.getTime() - RESUME_GRACE_MS);
    // A capture waiting for its slot's end (`dueAt` later than now) is left until then.
    // Oldest first; one that fails is touched (its `updatedAt` moves on), so it waits a grace
    // before its next try and a hundred that keep failing (a seller at the balance ceiling)
    // cannot hold every other settlement back.
    for (const record of await BookingHold.find({ status: 'Settling', updatedAt: { $lt: cutoff }, dueAt: { $not: { $gt: now } } })
      .sort({ updatedAt: 1 })
      .limit(100)
      .lean<BookingHoldDoc[]>()) {
      const correlationId = correlationIdOf(record);
      await this.carryOn(record, correlationId, now).catch(async (err: unknown) => {
        this.log.warn({ err, bookingId: record._id, correlationId }, 'hold settlement still waits');
        await BookingHold.updateOne({ _id: record._id, status: 'Settling' }, { $inc: { resumeFailures: 1 } });
      });
    }
    await this.reconcileStrayHolds(now);
    await this.forgetSettledOps(now);
  }

  /**
   * Records a decision in one conditional write (`Held → Settling`; the first wins). True when
   * this one was recorded.
   */
  private async decide(bookingId: string, settlement: Settlement, dueAt: Date | null, entry?: BookingHoldHistoryEntry): Promise<boolean> {
    const written = await BookingHold.updateOne(
      { _id: bookingId, status: 'Held', settlement: null },
      {
        $set: {
          status: 'Settling',
          settlement,
          dueAt,
          release: 'pending',
          credit: settlement.captureMinor - settlement.feeMinor > 0 ? 'pending' : 'none',
          fee: settlement.feeMinor > 0 ? 'pending' : 'none',
        },
        ...(entry ? { $push: { history: entry } } : {}),
      },
    );
    return written.modifiedCount === 1;
  }

  /** Inserts the record unless it exists; either way answers the stored one. */
  private async upsert(bookingId: string, fields: Partial<BookingHoldDoc>): Promise<BookingHoldDoc> {
    try {
      const record = await BookingHold.findOneAndUpdate(
        { _id: bookingId },
        { $setOnInsert: { ...fields, settlement: null } },
        { upsert: true, new: true },
      ).lean<BookingHoldDoc>();
      return record!;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      return (await this.find(bookingId))!;
    }
  }

  /** The hold step: applied to the wallet once (op id), then recorded; a refusal is final. */
  private async takeHold(record: BookingHoldDoc): Promise<BookingHoldDoc> {
    const op: WalletOp = {
      opId: holdOpId(record._id),
      type: 'booking_hold',
      availableDeltaMinor: -record.amountMinor,
      heldDeltaMinor: record.amountMinor,
      reference: record._id,
    };
    let entries: Awaited<ReturnType<typeof applyOp>>;
    try {
      entries = await applyOp(record.buyerWalletId!, op);
    } catch (err) {
      if (!(err instanceof InsufficientFunds)) throw err;
      await BookingHold.updateOne({ _id: record._id, status: 'Pending' }, { $set: { status: 'Rejected', hold: 'none' } });
      return (await this.find(record._id))!;
    }
    const fresh =
      (await BookingHold.findOneAndUpdate(
        { _id: record._id, status: 'Pending' },
        { $set: { status: 'Held', hold: 'done' } },
        { new: true },
      ).lean<BookingHoldDoc>()) ?? (await this.find(record._id))!;
    if (fresh.hold === 'done') {
      // The op id stays on the wallet until the settlement is long over (FORGET_OPS_AFTER_MS).
      if (entries) await this.ledger.moveAfterStep(record.buyerWalletId!, entries);
      this.log.info({ bookingId: record._id, correlationId: record.correlationId, amountMinor: record.amountMinor }, 'booking amount held');
    } else {
      // Voided or refused while this hold was being applied: the money goes straight back.
      await this.unholdIfApplied(fresh);
    }
    return fresh;
  }

  /**
   * Gives back a hold that was applied to the wallet but never recorded on its (now ended)
   * record. Both op ids stay on the wallet for good (a rare path), so neither the hold nor its
   * release can ever apply again.
   */
  private async unholdIfApplied(record: BookingHoldDoc): Promise<void> {
    const walletId = record.buyerWalletId;
    if (!walletId || record.hold === 'done') return;
    const wallet = await Wallet.findById(walletId, { appliedOps: 1 }).lean<WalletDoc>();
    if (!wallet?.appliedOps.includes(holdOpId(record._id))) return;
    const entries = await applyOp(walletId, {
      opId: unholdOpId(record._id),
      type: 'booking_settle',
      availableDeltaMinor: record.amountMinor,
      heldDeltaMinor: -record.amountMinor,
      reference: record._id,
    });
    if (entries) await this.ledger.moveAfterStep(walletId, entries);
    this.log.warn({ bookingId: record._id }, 'a hold applied after its booking was given up was released');
  }

  /**
   * Holds that ended without taking the money (refused, voided, or Pending past the abandon
   * time) but whose hold op reached the wallet anyway (a crash or a race between the two):
   * the money goes back.
   */
  private async reconcileStrayHolds(now: Date): Promise<void> {
    const ended = await BookingHold.find({
      hold: { $ne: 'done' },
      buyerWalletId: { $ne: null },
      $or: [
        {
          status: { $in: ['Rejected', 'Voided'] },
          updatedAt: { $lt: new Date(now.getTime() - RESUME_GRACE_MS), $gt: new Date(now.getTime() - STRAY_WINDOW_MS) },
        },
        { status: 'Pending', updatedAt: { $lt: new Date(now.getTime() - ABANDON_AFTER_MS) } },
      ],
    })
      .limit(100)
      .lean<BookingHoldDoc[]>();
    for (const record of ended) {
      if (record.status === 'Pending') await BookingHold.updateOne({ _id: record._id, status: 'Pending' }, { $set: { status: 'Voided' } });
      const fresh = (await this.find(record._id))!;
      if (fresh.hold !== 'done' && fresh.status !== 'Pending') await this.unholdIfApplied(fresh);
    }
  }

  /** Lets the wallets forget the op ids of settlements ended long ago (keeps `appliedOps` small). */
  private async forgetSettledOps(now: Date): Promise<void> {
    const old = await BookingHold.find({
      status: 'Settled',
      opsForgotten: { $ne: true },
      settledAt: { $lt: new Date(now.getTime() - FORGET_OPS_AFTER_MS) },
    })
      .limit(100)
      .lean<BookingHoldDoc[]>();
    for (const record of old) {
      const id = record._id;
      if (record.buyerWalletId) await dropWalletOps(record.buyerWalletId, [holdOpId(id), `booking:${id}:release`]);
      const seller = await Wallet.findOne({ userId: record.sellerId }, { _id: 1 }).lean<WalletDoc>();
      if (seller) await dropWalletOps(seller._id, [`booking:${id}:capture`]);
      const platform = await Wallet.findOne({ userId: PLATFORM_USER_ID }, { _id: 1 }).lean<WalletDoc>();
      if (platform) await dropWalletOps(platform._id, [`booking:${id}:fee`]);
      await BookingHold.updateOne({ _id: id }, { $set: { opsForgotten: true } });
    }
  }

  /**
   * The settlement's steps, in order: the buyer's held money first, then the credits; nothing
   * before the settlement is due (a capture before its slot's end).
   */
  private async carryOn(record: BookingHoldDoc, correlationId: string, now = new Date()): Promise<BookingHoldDoc> {
    if (!isSettlementDue(record.dueAt ?? null, now)) return record;
    const s = record.settlement!;
    // Applied (once: its op id), then recorded; the op id is forgotten only long after the end.
    const step = async (field: 'release' | 'credit' | 'fee', walletId: string, op: Omit<WalletOp, 'reference'>) => {
      const entries = await applyOp(walletId, { ...op, reference: record._id });
      await BookingHold.updateOne({ _id: record._id, [field]: 'pending' }, { $set: { [field]: 'done' } });
      if (entries) await this.ledger.moveAfterStep(walletId, entries);
    };
    if (record.release === 'pending')
      await step('release', record.buyerWalletId!, {
        opId: `booking:${record._id}:release`,
        type: 'booking_settle',
        availableDeltaMinor: s.refundMinor,
        heldDeltaMinor: -record.amountMinor,
      });
    if (record.credit === 'pending') {
      const seller = await findWallet({ userId: record.sellerId });
      if (!seller) throw new NotFound('Seller wallet'); // opened at registration; the sweep retries
      await this.credit(step, 'credit', seller._id, `booking:${record._id}:capture`, 'booking_capture', s.captureMinor - s.feeMinor);
    }
    if (record.fee === 'pending') {
      const platform = await openWallet(PLATFORM_USER_ID, `${this.settings.referencePrefix}-USR-PLATFORM`, this.settings.referencePrefix);
      await this.credit(step, 'fee', platform._id, `booking:${record._id}:fee`, 'booking_fee', s.feeMinor);
    }
    return this.finish(record._id, correlationId);
  }

  private async credit(
    step: (field: 'credit' | 'fee', walletId: string, op: Omit<WalletOp, 'reference'>) => Promise<void>,
    field: 'credit' | 'fee',
    walletId: string,
    opId: string,
    type: WalletOp['type'],
    amountMinor: number,
  ): Promise<void> {
    try {
      await step(field, walletId, {
        opId,
        type,
        availableDeltaMinor: amountMinor,
        heldDeltaMinor: 0,
        ceilingMinor: this.settings.ceilingMinor,
      });
    } catch (err) {
      // No room under the ceiling: the credit stays owed and the sweep retries it.
      if (err instanceof BalanceCeilingExceeded)
        this.log.error({ opId, walletId }, 'booking credit waits: the balance would pass its ceiling');
      throw err;
    }
  }

  /** All steps done → Settled, with its event, in one write. */
  private async finish(bookingId: string, correlationId: string): Promise<BookingHoldDoc> {
    const record = (await this.find(bookingId))!;
    const s = record.settlement!;
    const event = settlementEvent(record, correlationId);
    const done = await BookingHold.findOneAndUpdate(
      { _id: bookingId, status: 'Settling', release: 'done', credit: { $ne: 'pending' }, fee: { $ne: 'pending' } },
      { $set: { status: 'Settled', settledAt: new Date() }, ...(event ? { $push: { pendingEvents: event } } : {}) },
      { new: true },
    ).lean<BookingHoldDoc>();
    if (!done) return record;
    this.log.info(
      { bookingId, correlationId, kind: s.kind, refundMinor: s.refundMinor, captureMinor: s.captureMinor },
      'booking hold settled',
    );
    if (event) void this.outbox.flush(BookingHold, bookingId);
    return done;
  }
}
