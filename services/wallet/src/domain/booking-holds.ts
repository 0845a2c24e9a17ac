import type { CreateBookingHoldBody, IntegrationEvent } from '@mkt/contracts/wallet';
import { Conflict, InvalidState, NotFound } from '@mkt/kit/domain';
import type { BookingHoldDoc, BookingHoldHistoryEntry, Settlement, SettlementKind, StepState, WalletOp, WalletSummary } from './records';
import { settlementDueAt, settlementOf } from './settlement';
import { CurrencyMismatch } from './errors';

/**
 * The money of paid bookings. A hold moves the total from the buyer's available to held
 * balance (idempotent by booking); it ends once, by a settlement decided in one conditional
 * write: capture (delivered: all to the seller, less the platform fee), cancel (the refund back
 * to the buyer, the rest to the seller) or void (never confirmed: all back). Each money step
 * is applied by its op id and recorded on the hold; the sweep resumes what a crash left.
 */
export interface BookingHoldSettings {
  referencePrefix: string;
  ceilingMinor: number;
  /** Platform fee on what the seller receives, in basis points (100 = 1 %). */
  feeBps: number;
  /** How long after the slot's end the capture of a no-show waits (the buyer may dispute it meanwhile). */
  noShowDisputeWindowMs?: number;
}

/** By default a no-show's capture waits a day after the slot's end for a dispute. */
export const NO_SHOW_DISPUTE_WINDOW_MS = 24 * 3_600_000;

/** Steps left by a crash are resumed after this long (a live request finishes well before). */
export const RESUME_GRACE_MS = 30_000;
/** A hold whose request died before it was recorded is given up after this (the consultation voids first). */
export const ABANDON_AFTER_MS = 60 * 60_000;
/** Ended holds are checked for a hold op applied after their end for this long. */
export const STRAY_WINDOW_MS = 24 * 3_600_000;

export const PLATFORM_USER_ID = 'platform';
export const platformUserRef = (referencePrefix: string) => `${referencePrefix}-USR-PLATFORM`;

export const holdOpId = (bookingId: string) => `booking:${bookingId}:hold`;
export const unholdOpId = (bookingId: string) => `booking:${bookingId}:unhold`;
export const releaseOpId = (bookingId: string) => `booking:${bookingId}:release`;
export const captureOpId = (bookingId: string) => `booking:${bookingId}:capture`;
export const feeOpId = (bookingId: string) => `booking:${bookingId}:fee`;

/**
 * The correlation id a sweep carries a hold's late steps on: the decision's, else the
 * booking's; a hold from before either was stored has only its booking id.
 */
export const holdCorrelationId = (record: BookingHoldDoc) => record.settlement?.correlationId ?? record.correlationId ?? record._id;

/** A hold request against the buyer's wallet: the same currency, else 422. Answers the new record's fields. */
export function newHold(
  body: CreateBookingHoldBody,
  wallet: Pick<WalletSummary, '_id' | 'currency'>,
  correlationId: string,
): Partial<BookingHoldDoc> {
  if (wallet.currency !== body.currency) throw new CurrencyMismatch(wallet.currency);
  return {
    buyerId: body.buyerId,
    buyerWalletId: wallet._id,
    sellerId: body.sellerId,
    amountMinor: body.amountMinor,
    currency: body.currency,
    status: 'Pending',
    hold: 'pending',
    endsAt: body.endsAt ? new Date(body.endsAt) : null,
    consultationId: body.consultationId ?? null,
    correlationId,
  };
}

/** The marker a void leaves for a booking never held: a hold request arriving later finds it Voided. */
export const voidedMarker: Partial<BookingHoldDoc> = { buyerId: '', sellerId: '', amountMinor: 0, currency: '', status: 'Voided' };

/**
 * A repeated hold request meets the stored record: a voided booking answers as it is; other
 * terms than the stored ones are 409; otherwise the stored record stands (its hold is taken
 * while it is Pending).
 */
export function checkHoldTerms(record: BookingHoldDoc, body: Pick<CreateBookingHoldBody, 'buyerId' | 'sellerId' | 'amountMinor'>): void {
  if (record.status === 'Voided') return;
  if (record.buyerId !== body.buyerId || record.sellerId !== body.sellerId || record.amountMinor !== body.amountMinor)
    throw new Conflict('This booking already has a hold with other terms');
}

/** A settlement decided: the write `Held → Settling` (first one wins) and the steps it owes. */
export interface SettlementDecision {
  bookingId: string;
  settlement: Settlement;
  dueAt: Date | null;
  release: StepState;
  credit: StepState;
  fee: StepState;
  history?: BookingHoldHistoryEntry;
  /** An admin's decision: its audit entry, pushed into the outbox by the same write. */
  audit?: IntegrationEvent;
}

/**
 * A capture decided but not carried out yet (its money has not begun to move): an admin may
 * still void it — a no-show waiting out its dispute window, or a capture waiting for its slot's end.
 */
export const isVoidableCapture = (hold: Pick<BookingHoldDoc, 'status' | 'settlement' | 'moving' | 'release'>) =>
  hold.status === 'Settling' && hold.settlement?.kind === 'capture' && hold.moving !== true && hold.release === 'pending';

/**
 * How a Held hold ends: the split (refund, capture, fee), when its money may move (a capture
 * before the slot's end waits for it; a no-show's capture also waits out the dispute window
 * after it), and which steps it owes (no seller credit or fee step for nothing). Null when the
 * hold is not Held: decided already, or never held — except an admin's void of a capture not
 * carried out yet, which replaces it.
 */
export function decideSettlement(
  hold: BookingHoldDoc,
  kind: SettlementKind,
  requestedRefundMinor: number,
  feeBps: number,
  origin: { now: Date; correlationId: string; admin?: { id: string; reason: string }; noShowWindowMs?: number },
): SettlementDecision | null {
  const replacesCapture = origin.admin !== undefined && kind === 'void' && isVoidableCapture(hold);
  if (hold.status !== 'Held' && !replacesCapture) return null;
  const split = settlementOf(kind, hold.amountMinor, requestedRefundMinor, feeBps);
  const noShow = kind === 'capture' && origin.noShowWindowMs !== undefined;
  const settlement: Settlement = {
    ...split,
    decidedAt: origin.now,
    correlationId: origin.correlationId,
    ...(origin.admin ? { byAdmin: true } : {}),
    ...(noShow ? { noShow: true } : {}),
  };
  const slotOver = Math.max(hold.endsAt?.getTime() ?? 0, origin.now.getTime());
  return {
    bookingId: hold._id,
    settlement,
    // An admin's void moves at once, whatever the slot.
    dueAt: origin.admin
      ? null
      : noShow
        ? new Date(slotOver + origin.noShowWindowMs!)
        : settlementDueAt(kind, hold.endsAt ?? null, origin.now),
    release: 'pending',
    credit: split.captureMinor - split.feeMinor > 0 ? 'pending' : 'none',
    fee: split.feeMinor > 0 ? 'pending' : 'none',
    ...(origin.admin ? { history: { action: 'void', by: origin.admin.id, at: origin.now, reason: origin.admin.reason } } : {}),
  };
}

/**
 * An admin's void: of a Held hold, or of a capture whose money has not begun to move (the guard
 * is in the write: of a racing settlement sweep and the admin one wins; the other finds it, 409).
 */
export function adminVoidRefused(status: BookingHoldDoc['status']): InvalidState {
  return new InvalidState(`Only a Held hold or a capture not yet carried out can be voided; this one is ${status}`);
}

/** A void met a settlement other than a void: the booking's payment is settled already. */
export function checkVoidable(record: BookingHoldDoc): void {
  if (record.settlement && record.settlement.kind !== 'void') throw new Conflict('The booking’s payment has already been settled');
}

export function requireHold(record: BookingHoldDoc | null): BookingHoldDoc {
  if (!record) throw new NotFound('Hold');
  return record;
}

type HoldMoney = Pick<BookingHoldDoc, '_id' | 'amountMinor'>;

export const holdOp = (hold: HoldMoney): WalletOp => ({
  opId: holdOpId(hold._id),
  type: 'booking_hold',
  availableDeltaMinor: -hold.amountMinor,
  heldDeltaMinor: hold.amountMinor,
  reference: hold._id,
});

/** Gives back a hold applied after its record ended without it. */
export const unholdOp = (hold: HoldMoney): WalletOp => ({
  opId: unholdOpId(hold._id),
  type: 'booking_settle',
  availableDeltaMinor: hold.amountMinor,
  heldDeltaMinor: -hold.amountMinor,
  reference: hold._id,
});

/** The buyer's step: the whole amount leaves held, the refund goes back to available. */
export const releaseOp = (hold: HoldMoney, settlement: Settlement): WalletOp => ({
  opId: releaseOpId(hold._id),
  type: 'booking_settle',
  availableDeltaMinor: settlement.refundMinor,
  heldDeltaMinor: -hold.amountMinor,
  reference: hold._id,
});

/** The seller's credit: what was captured less the fee, under the ceiling. */
export const sellerCreditOp = (hold: HoldMoney, settlement: Settlement, ceilingMinor: number): WalletOp => ({
  opId: captureOpId(hold._id),
  type: 'booking_capture',
  availableDeltaMinor: settlement.captureMinor - settlement.feeMinor,
  heldDeltaMinor: 0,
  reference: hold._id,
  ceilingMinor,
});

/** The platform's fee, under the ceiling. */
export const platformFeeOp = (hold: HoldMoney, settlement: Settlement, ceilingMinor: number): WalletOp => ({
  opId: feeOpId(hold._id),
  type: 'booking_fee',
  availableDeltaMinor: settlement.feeMinor,
  heldDeltaMinor: 0,
  reference: hold._id,
  ceilingMinor,
});
