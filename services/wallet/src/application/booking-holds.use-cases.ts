import { pageOffset, type AdminRequestContext, type CreateBookingHoldBody, type HoldQueueQuery } from '@mkt/contracts/wallet';
import { defineFlow, kindStep, resumeFlow, runFlow, type Flow, type Step, type StepKind } from '@mkt/kit/steps';
import { InvalidState, NotFound } from '@mkt/kit/domain';
import type { AuthenticatedUser } from '@mkt/kit/http';
import type { Logger } from '@mkt/kit/logger';
import type { BookingHoldRepository, HoldStepField } from '../db/booking-hold.repository';
import type { TransferRepository } from '../db/transfer.repository';
import type { WalletRepository } from '../db/wallet.repository';
import {
  ABANDON_AFTER_MS,
  adminVoidRefused,
  captureOpId,
  checkHoldTerms,
  checkVoidable,
  decideSettlement,
  feeOpId,
  holdCorrelationId,
  holdOp,
  holdOpId,
  newHold,
  NO_SHOW_DISPUTE_WINDOW_MS,
  PLATFORM_USER_ID,
  platformFeeOp,
  platformUserRef,
  releaseOp,
  releaseOpId,
  requireHold,
  RESUME_GRACE_MS,
  sellerCreditOp,
  STRAY_WINDOW_MS,
  unholdOp,
  voidedMarker,
  type BookingHoldSettings,
} from '../domain/booking-holds';
import { HOLD_OVERDUE_AFTER_MS, walletAuditEvent } from '../domain/admin-audit';
import type { BookingHoldDoc, SettlementKind } from '../domain/records';
import { isSettlementDue, settlementEvent } from '../domain/settlement';
import { BalanceCeilingExceeded, InsufficientFunds } from '../domain/errors';
import { stepStatus, type WalletSteps, type WalletWork } from './wallet.steps';
import type { Wallets } from './wallets.use-cases';

/** A settlement's run: under whose correlation id its late steps and its event go. */
interface SettlementRun {
  correlationId: string;
}

/**
 * The money of paid bookings (see domain/booking-holds.ts), on kit's step runner: the `hold`
 * flow (one step on the buyer's wallet), then, once a settlement is decided, the settlement
 * flow — `release` (buyer), `credit` (seller), `fee` (platform), `settled` (the record ends with
 * its event). Each op applies once, ever: its id is its ledger entry's key.
 */
export class BookingHolds {
  private readonly holdFlow: Flow<BookingHoldDoc>;
  private readonly settlementFlow: Flow<BookingHoldDoc, SettlementRun>;

  constructor(
    private readonly settings: BookingHoldSettings,
    private readonly holds: BookingHoldRepository,
    private readonly walletRepository: WalletRepository,
    private readonly wallets: Wallets,
    private readonly steps: WalletSteps,
    private readonly log: Logger,
    private readonly transfers: Pick<TransferRepository, 'completedTotal'>,
  ) {
    const holdStep: Step<BookingHoldDoc> = {
      name: 'hold',
      opId: (record) => holdOpId(record._id),
      status: (record) => (record.status === 'Pending' ? 'todo' : record.hold === 'done' ? 'done' : 'skip'),
      run: (record) => this.takeHold(record),
    };
    this.holdFlow = defineFlow('booking-hold', [holdStep]);
    // No room under the ceiling for a credit: it stays owed and the sweep retries it (logged).
    const credits: StepKind<WalletWork, boolean> = {
      apply: async (work, opId) => {
        try {
          return await steps.apply(work);
        } catch (err) {
          if (err instanceof BalanceCeilingExceeded)
            this.log.error({ opId, walletId: work.walletId }, 'booking credit waits: the balance would pass its ceiling');
          throw err;
        }
      },
      after: () => steps.after(),
    };
    const record = (field: HoldStepField) => async (hold: BookingHoldDoc) => {
      await this.holds.recordStep(hold._id, field);
      return { ...hold, [field]: 'done' };
    };
    const settled: Step<BookingHoldDoc, SettlementRun> = {
      name: 'settled',
      opId: (hold) => `booking:${hold._id}:settled`,
      status: (hold) => (hold.status === 'Settling' ? 'todo' : hold.status === 'Settled' ? 'done' : 'skip'),
      run: (hold, _opId, run) => this.finish(hold._id, run.correlationId),
    };
    this.settlementFlow = defineFlow<BookingHoldDoc, SettlementRun>('booking-settlement', [
      // The buyer's held money first, then the credits.
      kindStep(steps, {
        name: 'release',
        opId: (hold) => releaseOpId(hold._id),
        status: (hold) => stepStatus(hold.release),
        work: (hold) => ({ walletId: hold.buyerWalletId!, op: releaseOp(hold, hold.settlement!) }),
        record: record('release'),
      }),
      kindStep(credits, {
        name: 'credit',
        opId: (hold) => captureOpId(hold._id),
        status: (hold) => stepStatus(hold.credit),
        work: async (hold) => {
          const seller = await this.walletRepository.find({ userId: hold.sellerId });
          if (!seller) throw new NotFound('Seller wallet'); // opened at registration; the sweep retries
          return { walletId: seller._id, op: sellerCreditOp(hold, hold.settlement!, settings.ceilingMinor) };
        },
        record: record('credit'),
      }),
      kindStep(credits, {
        name: 'fee',
        opId: (hold) => feeOpId(hold._id),
        status: (hold) => stepStatus(hold.fee),
        work: async (hold) => {
          const platform = await this.wallets.open(PLATFORM_USER_ID, platformUserRef(settings.referencePrefix));
          return { walletId: platform._id, op: platformFeeOp(hold, hold.settlement!, settings.ceilingMinor) };
        },
        record: record('fee'),
      }),
      settled,
    ]);
  }

  /**
   * Holds the booking's total on the buyer's wallet, once; a repeat answers the same.
   * `correlationId` is the booking's (consultation's): the hold's events and logs carry it.
   */
  async hold(body: CreateBookingHoldBody, correlationId: string): Promise<BookingHoldDoc> {
    const wallet = await this.wallets.identityOf(body.buyerId, body.buyerRef);
    const record = await this.holds.upsert(body.bookingId, newHold(body, wallet, correlationId));
    checkHoldTerms(record, body);
    return (await runFlow(this.holdFlow, record)).record;
  }

  /**
   * The consultation gave the booking up (its payment never confirmed in time): whatever was
   * held goes back, and a hold request arriving later finds the booking voided.
   */
  async void(bookingId: string, correlationId: string): Promise<BookingHoldDoc> {
    let record = await this.holds.upsert(bookingId, voidedMarker);
    if (record.status === 'Pending') {
      await this.holds.voidPending(bookingId);
      record = (await this.holds.find(bookingId))!;
      if (record.status === 'Voided') await this.unholdIfApplied(record);
    }
    if (record.status === 'Held') record = await this.settle(bookingId, 'void', 0, correlationId);
    checkVoidable(record);
    return (await this.holds.find(bookingId))!;
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
    options: { noShow?: boolean } = {},
  ): Promise<BookingHoldDoc> {
    const current = requireHold(await this.holds.find(bookingId));
    const noShowWindowMs = options.noShow ? (this.settings.noShowDisputeWindowMs ?? NO_SHOW_DISPUTE_WINDOW_MS) : undefined;
    const decision = decideSettlement(current, kind, requestedRefundMinor, this.settings.feeBps, { now, correlationId, noShowWindowMs });
    if (decision) await this.holds.decide(decision);
    const decided = (await this.holds.find(bookingId))!;
    if (decided.status !== 'Settling') return decided;
    if (!isSettlementDue(decided.dueAt ?? null, now))
      this.log.info({ bookingId, correlationId, dueAt: decided.dueAt }, 'capture decided before the slot ends: the money moves then');
    return this.carryOn(decided, correlationId, now);
  }

  /**
   * An admin's void: the whole amount back to the buyer, the admin and the reason on the hold's
   * history, and `wallet.booking_refund.completed` with `voidedByAdmin` (the consultation
   * cancels the booking from it). Of a Held hold, or of a capture not carried out yet (a
   * no-show waiting out its dispute window, a capture waiting for its slot's end): it replaces
   * the capture. A capture whose money has begun to move, a refund, or a settled hold is 409 —
   * the guards are in the writes (`replaceCapture` vs `claim`), so the admin and a racing
   * settlement sweep cannot both move the money.
   */
  async voidByAdmin(bookingId: string, admin: AuthenticatedUser, reason: string, context: AdminRequestContext): Promise<BookingHoldDoc> {
    const correlationId = context.requestId;
    const current = requireHold(await this.holds.find(bookingId));
    const now = new Date();
    const voidDecision = decideSettlement(current, 'void', 0, this.settings.feeBps, {
      now,
      correlationId,
      admin: { id: admin.id, reason },
    });
    // The audit entry rides on the decision's own write: no void without it, no entry without the void.
    const decision = voidDecision && {
      ...voidDecision,
      audit: walletAuditEvent(admin, 'booking_hold.void', { type: 'booking_hold', id: bookingId }, context, now, {
        before: { status: current.status, settlement: current.settlement?.kind ?? null, disputed: current.disputed === true },
        after: { status: 'Settling', settlement: 'void', refundMinor: voidDecision.settlement.refundMinor },
        notes: reason,
      }),
    };
    const decided =
      decision !== null && (await (current.status === 'Held' ? this.holds.decide(decision) : this.holds.replaceCapture(decision)));
    if (!decided) throw adminVoidRefused((await this.holds.find(bookingId))!.status);
    this.log.warn({ bookingId, adminId: admin.id, correlationId, amountMinor: current.amountMinor, reason }, 'hold voided by an admin');
    return this.carryOn((await this.holds.find(bookingId))!, correlationId, now);
  }

  /**
   * The buyer disputes the no-show (from the consultation's event): the hold is flagged, and a
   * capture waits for an admin — voided (all back to the buyer) or upheld (it goes on). Once its
   * money has begun to move a dispute changes nothing (logged for the admin). A repeat changes nothing.
   */
  async dispute(bookingId: string, reason: string, at: Date, correlationId: string): Promise<BookingHoldDoc | null> {
    const record = await this.holds.find(bookingId);
    if (!record) return null; // a free booking: no money to hold back
    if (!(await this.holds.dispute(bookingId, reason, at)) && !record.disputed)
      this.log.warn({ bookingId, correlationId, status: record.status }, 'a dispute came after the hold’s money moved');
    else this.log.info({ bookingId, correlationId }, 'booking hold disputed: its capture waits for an admin');
    return this.holds.find(bookingId);
  }

  /** An admin rules for the seller: the disputed capture goes on (at once when it is due). 409 when not disputed. */
  async upholdCapture(bookingId: string, admin: AuthenticatedUser, reason: string, context: AdminRequestContext): Promise<BookingHoldDoc> {
    const correlationId = context.requestId;
    const current = requireHold(await this.holds.find(bookingId));
    const now = new Date();
    const audit = walletAuditEvent(admin, 'booking_hold.uphold', { type: 'booking_hold', id: bookingId }, context, now, {
      before: { status: current.status, disputed: true },
      after: { status: current.status, disputed: false, resolution: 'capture_upheld' },
      notes: reason,
    });
    if (!(await this.holds.upholdCapture(bookingId, admin.id, reason, now, audit)))
      throw new InvalidState(`Only a disputed hold whose money has not moved can be upheld; this one is ${current.status}`);
    this.log.warn({ bookingId, adminId: admin.id, correlationId, reason }, 'disputed capture upheld by an admin');
    const fresh = (await this.holds.find(bookingId))!;
    return fresh.status === 'Settling' ? this.carryOn(fresh, holdCorrelationId(fresh), new Date()) : fresh;
  }

  /** The admins' queue: holds overdue (open past their slot's end and the grace) or disputed. */
  queue(query: HoldQueueQuery, now = new Date()): ReturnType<BookingHoldRepository['queue']> {
    return this.holds.queue(query.kind, new Date(now.getTime() - HOLD_OVERDUE_AFTER_MS), pageOffset(query), query.limit);
  }

  async get(bookingId: string): Promise<BookingHoldDoc> {
    return requireHold(await this.holds.find(bookingId));
  }

  /** The hold of a booking; null when it has none (a free booking). */
  find(bookingId: string): Promise<BookingHoldDoc | null> {
    return this.holds.find(bookingId);
  }

  /**
   * Finishes settlements a crash interrupted (the runner resumes their flow, under the
   * decision's correlation id) and gives back holds whose record never took them.
   */
  async resume(now = new Date()): Promise<void> {
    await resumeFlow(this.settlementFlow, {
      unfinished: () => this.claimed(this.holds.settlingDue(new Date(now.getTime() - RESUME_GRACE_MS), now)),
      context: (record) => ({ correlationId: holdCorrelationId(record) }),
      onError: async (err, record) => {
        this.log.warn({ err, bookingId: record._id, correlationId: holdCorrelationId(record) }, 'hold settlement still waits');
        await this.holds.countResumeFailure(record._id);
      },
    });
    await this.reconcileStrayHolds(now);
  }

  /**
   * The settlement's steps still owed; nothing before the settlement is due (a capture before its
   * slot's end, a no-show's within its dispute window). The steps run on the record as claimed
   * (`moving`, one conditional write): an admin's void that won the race is what is carried out.
   */
  private async carryOn(record: BookingHoldDoc, correlationId: string, now: Date): Promise<BookingHoldDoc> {
    if (!isSettlementDue(record.dueAt ?? null, now)) return record;
    const claimed = await this.holds.claim(record._id);
    if (!claimed) return (await this.holds.find(record._id))!;
    return (await runFlow(this.settlementFlow, claimed, { correlationId })).record;
  }

  /** The due settlements as each is claimed (a disputed capture, or one ended meanwhile, is left out). */
  private async claimed(due: Promise<BookingHoldDoc[]>): Promise<BookingHoldDoc[]> {
    const claimed: BookingHoldDoc[] = [];
    for (const record of await due) {
      const fresh = await this.holds.claim(record._id);
      if (fresh) claimed.push(fresh);
    }
    return claimed;
  }

  /** The hold step: applied to the wallet once (op id), then recorded; a refusal is final. */
  private async takeHold(record: BookingHoldDoc): Promise<BookingHoldDoc> {
    const work: WalletWork = { walletId: record.buyerWalletId!, op: holdOp(record) };
    try {
      await this.steps.apply(work);
    } catch (err) {
      if (!(err instanceof InsufficientFunds)) throw err;
      await this.holds.reject(record._id);
      return (await this.holds.find(record._id))!;
    }
    const fresh = (await this.holds.recordHeld(record._id)) ?? (await this.holds.find(record._id))!;
    if (fresh.hold === 'done') {
      this.log.info({ bookingId: record._id, correlationId: record.correlationId, amountMinor: record.amountMinor }, 'booking amount held');
    } else {
      // Voided or refused while this hold was being applied: the money goes straight back.
      await this.unholdIfApplied(fresh);
    }
    return fresh;
  }

  /**
   * Gives back a hold that was applied to the wallet but never recorded on its (now ended)
   * record. Neither the hold nor its give-back can ever apply again (their op ids are ledger keys).
   */
  private async unholdIfApplied(record: BookingHoldDoc): Promise<void> {
    const walletId = record.buyerWalletId;
    if (!walletId || record.hold === 'done') return;
    if (!(await this.steps.hasApplied(walletId, holdOpId(record._id)))) return;
    await this.steps.apply({ walletId, op: unholdOp(record) });
    this.log.warn({ bookingId: record._id }, 'a hold applied after its booking was given up was released');
  }

  /**
   * Holds that ended without taking the money (refused, voided, or Pending past the abandon
   * time) but whose hold op reached the wallet anyway (a crash or a race between the two):
   * the money goes back.
   */
  private async reconcileStrayHolds(now: Date): Promise<void> {
    const ago = (ms: number) => new Date(now.getTime() - ms);
    for (const record of await this.holds.possiblyStray(ago(RESUME_GRACE_MS), ago(STRAY_WINDOW_MS), ago(ABANDON_AFTER_MS))) {
      if (record.status === 'Pending') await this.holds.voidPending(record._id);
      const fresh = (await this.holds.find(record._id))!;
      if (fresh.hold !== 'done' && fresh.status !== 'Pending') await this.unholdIfApplied(fresh);
    }
  }

  /** All steps done → Settled, with its event, in one write. */
  private async finish(bookingId: string, correlationId: string): Promise<BookingHoldDoc> {
    const record = (await this.holds.find(bookingId))!;
    const s = record.settlement!;
    // A capture tells how much of it the buyer had received from the seller (a review it buys does not count).
    const receivedFromSeller = s.kind === 'capture' ? await this.transfers.completedTotal(record.sellerId, record.buyerId) : 0;
    const event = settlementEvent(record, correlationId, receivedFromSeller);
    const done = await this.holds.finish(bookingId, event, new Date());
    if (!done) return record;
    this.log.info(
      { bookingId, correlationId, kind: s.kind, refundMinor: s.refundMinor, captureMinor: s.captureMinor },
      'booking hold settled',
    );
    return done;
  }
}
