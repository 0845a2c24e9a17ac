import { Conflict } from '@mkt/kit/domain';
import { checkHoldTerms, decideSettlement, holdCorrelationId, isVoidableCapture, newHold } from '../../src/domain/booking-holds';
import type { BookingHoldDoc, WalletSummary } from '../../src/domain/records';
import { isSettlementDue, sellerFundedOf, settlementDueAt, settlementEvent, settlementOf } from '../../src/domain/settlement';
import { HARD_CEILING_MINOR } from '../../src/domain/wallet-ops';
import { CurrencyMismatch } from '../../src/domain/errors';

describe('when a decided settlement’s money may move', () => {
  const now = new Date('2026-11-23T09:15:00.000Z');
  const slotEnd = new Date('2026-11-23T10:00:00.000Z');

  test('a capture before the slot’s end waits for it', () => {
    expect(settlementDueAt('capture', slotEnd, now)).toEqual(slotEnd);
    expect(isSettlementDue(slotEnd, now)).toBe(false);
    expect(isSettlementDue(slotEnd, slotEnd)).toBe(true);
  });

  test('a capture once the slot is over, or of a hold without endsAt (previous release), moves at once', () => {
    expect(settlementDueAt('capture', now, slotEnd)).toBeNull();
    expect(settlementDueAt('capture', null, now)).toBeNull();
    expect(isSettlementDue(null, now)).toBe(true);
  });

  test('a refund is never deferred: cancel and void move at once', () => {
    expect(settlementDueAt('cancel', slotEnd, now)).toBeNull();
    expect(settlementDueAt('void', slotEnd, now)).toBeNull();
  });
});

describe('how a hold is split when it ends (settlementOf)', () => {
  test.each([
    // kind, amount, refund asked, fee bps → refund, capture, fee
    ['capture', 100_00, 0, 0, 0, 100_00, 0],
    ['capture', 100_00, 50_00, 1000, 0, 100_00, 10_00],
    ['void', 100_00, 0, 1000, 100_00, 0, 0],
    ['void', 100_00, 30_00, 1000, 100_00, 0, 0],
    ['cancel', 100_00, 30_00, 0, 30_00, 70_00, 0],
    ['cancel', 100_00, 30_00, 1000, 30_00, 70_00, 7_00],
    ['cancel', 100_00, 150_00, 1000, 100_00, 0, 0], // never more than held
    ['cancel', 100_00, -5, 1000, 0, 100_00, 10_00], // never less than nothing
    ['capture', 99, 0, 1000, 0, 99, 9], // the fee is rounded down
    ['capture', 1, 0, 9999, 0, 1, 0],
  ] as const)('%s of %i asking %i at %i bps → refund %i, capture %i, fee %i', (kind, amount, asked, bps, refund, capture, fee) => {
    const split = settlementOf(kind, amount, asked, bps);
    expect(split).toEqual({ kind, refundMinor: refund, captureMinor: capture, feeMinor: fee });
    expect(split.refundMinor + split.captureMinor).toBe(amount);
  });

  test('the fee is exact without any product past 2^53, even at the hard ceiling', () => {
    const amount = HARD_CEILING_MINOR - 1;
    const { feeMinor } = settlementOf('capture', amount, 0, 9999);
    expect(Number.isSafeInteger(feeMinor)).toBe(true);
    expect(BigInt(feeMinor)).toBe((BigInt(amount) * 9999n) / 10_000n);
  });
});

const hold = (over: Partial<BookingHoldDoc> = {}): BookingHoldDoc => ({
  _id: 'b1',
  buyerId: 'buyer',
  buyerWalletId: 'w-buyer',
  sellerId: 'seller',
  amountMinor: 100_00,
  currency: 'ETB',
  status: 'Held',
  endsAt: null,
  dueAt: null,
  correlationId: 'booking-corr',
  history: [],
  hold: 'done',
  settlement: null,
  release: 'none',
  credit: 'none',
  fee: 'none',
  settledAt: null,
  pendingEvents: [],
  createdAt: new Date(0),
  updatedAt: new Date(0),
  ...over,
});

describe('a settlement is decided once, of a Held hold only (decideSettlement)', () => {
  const now = new Date('2026-11-23T09:15:00.000Z');
  const slotEnd = new Date('2026-11-23T10:00:00.000Z');

  test.each(['Pending', 'Rejected', 'Voided', 'Settling', 'Settled'] as const)('a %s hold: no decision', (status) => {
    expect(decideSettlement(hold({ status }), 'capture', 0, 0, { now, correlationId: 'c' })).toBeNull();
  });

  test.each([
    // kind, refund, bps → steps owed: release, credit, fee
    ['capture', 0, 0, 'pending', 'pending', 'none'],
    ['capture', 0, 1000, 'pending', 'pending', 'pending'],
    ['cancel', 100_00, 1000, 'pending', 'none', 'none'],
    ['void', 0, 1000, 'pending', 'none', 'none'],
    ['capture', 0, 10_000, 'pending', 'none', 'pending'], // all of it is the fee
  ] as const)('%s (refund %i, %i bps) owes release %s, credit %s, fee %s', (kind, refund, bps, release, credit, fee) => {
    const decision = decideSettlement(hold(), kind, refund, bps, { now, correlationId: 'c' })!;
    expect({ release: decision.release, credit: decision.credit, fee: decision.fee }).toEqual({ release, credit, fee });
    expect(decision.settlement).toMatchObject({ kind, decidedAt: now, correlationId: 'c' });
    expect(decision.history).toBeUndefined();
  });

  test('a capture before the slot’s end is due at its end; an admin’s void at once, on the history', () => {
    expect(decideSettlement(hold({ endsAt: slotEnd }), 'capture', 0, 0, { now, correlationId: 'c' })!.dueAt).toEqual(slotEnd);
    const voided = decideSettlement(hold({ endsAt: slotEnd }), 'void', 0, 0, {
      now,
      correlationId: 'c',
      admin: { id: 'admin-1', reason: 'never ended' },
    })!;
    expect(voided.dueAt).toBeNull();
    expect(voided.settlement.byAdmin).toBe(true);
    expect(voided.history).toEqual({ action: 'void', by: 'admin-1', at: now, reason: 'never ended' });
  });
});

describe('a no-show’s capture, and an admin’s void of a capture not carried out', () => {
  const now = new Date('2026-11-23T09:30:00.000Z');
  const slotEnd = new Date('2026-11-23T10:00:00.000Z');
  const DAY = 24 * 3_600_000;
  const capture = (over: Partial<BookingHoldDoc> = {}) =>
    hold({
      status: 'Settling',
      settlement: { ...settlementOf('capture', 100_00, 0, 0), decidedAt: now },
      release: 'pending',
      credit: 'pending',
      ...over,
    });
  const adminVoid = (record: BookingHoldDoc) =>
    decideSettlement(record, 'void', 0, 0, { now, correlationId: 'c', admin: { id: 'admin-1', reason: 'disputed' } });

  test('a no-show’s capture is due its window after the later of the slot’s end and the marking', () => {
    const within = decideSettlement(hold({ endsAt: slotEnd }), 'capture', 0, 0, { now, correlationId: 'c', noShowWindowMs: DAY })!;
    expect(within.dueAt).toEqual(new Date(slotEnd.getTime() + DAY));
    expect(within.settlement.noShow).toBe(true);
    const late = new Date(slotEnd.getTime() + 3_600_000);
    const after = decideSettlement(hold({ endsAt: slotEnd }), 'capture', 0, 0, { now: late, correlationId: 'c', noShowWindowMs: DAY })!;
    expect(after.dueAt).toEqual(new Date(late.getTime() + DAY));
  });

  test('an admin’s void replaces a capture whose money has not begun to move; nothing else replaces it', () => {
    expect(isVoidableCapture(capture())).toBe(true);
    expect(adminVoid(capture())!.settlement).toMatchObject({ kind: 'void', refundMinor: 100_00, byAdmin: true });
    expect(adminVoid(capture())!.dueAt).toBeNull();
    for (const moved of [capture({ moving: true }), capture({ release: 'done' }), capture({ status: 'Settled' })]) {
      expect(isVoidableCapture(moved)).toBe(false);
      expect(adminVoid(moved)).toBeNull();
    }
    const refund = capture({ settlement: { ...settlementOf('cancel', 100_00, 50_00, 0), decidedAt: now } });
    expect(adminVoid(refund)).toBeNull();
    // Only an admin's void: an event's decision never replaces one.
    expect(decideSettlement(capture(), 'void', 0, 0, { now, correlationId: 'c' })).toBeNull();
    expect(decideSettlement(capture(), 'cancel', 100_00, 0, { now, correlationId: 'c' })).toBeNull();
  });
});

describe('what a finished settlement tells the others (settlementEvent)', () => {
  test('a capture tells how much of it the buyer had received from the seller, never more than captured', () => {
    const captured = hold({ status: 'Settling', settlement: { ...settlementOf('capture', 100_00, 0, 1000), decidedAt: new Date(0) } });
    expect(settlementEvent(captured, 'c')!.data).toMatchObject({ amountMinor: 100_00, sellerFundedMinor: 0 });
    expect(settlementEvent(captured, 'c', 30_00)!.data).toMatchObject({ sellerFundedMinor: 30_00 });
    expect(settlementEvent(captured, 'c', 900_00)!.data).toMatchObject({ sellerFundedMinor: 100_00 });
    expect(sellerFundedOf(5, -1)).toBe(0);
  });

  const decided = (kind: 'capture' | 'cancel' | 'void', byAdmin = false) =>
    hold({
      status: 'Settling',
      settlement: { ...settlementOf(kind, 100_00, 40_00, 1000), decidedAt: new Date(0), ...(byAdmin ? { byAdmin } : {}) },
    });

  test.each([
    ['capture', false, 'wallet.booking_payment.captured', { amountMinor: 100_00, feeMinor: 10_00 }],
    ['cancel', false, 'wallet.booking_refund.completed', { refundAmountMinor: 40_00, capturedAmountMinor: 60_00 }],
    ['void', true, 'wallet.booking_refund.completed', { refundAmountMinor: 100_00, capturedAmountMinor: 0, voidedByAdmin: true }],
  ] as const)('%s (by admin: %s) → %s', (kind, byAdmin, type, data) => {
    const event = settlementEvent(decided(kind, byAdmin), 'corr-1')!;
    expect(event.type).toBe(type);
    expect(event.correlationId).toBe('corr-1');
    expect(event.data).toMatchObject({ bookingId: 'b1', buyerId: 'buyer', sellerId: 'seller', currency: 'ETB', ...data });
  });

  test('a void the consultation asked for publishes nothing (it gave the booking up itself)', () => {
    expect(settlementEvent(decided('void'), 'corr-1')).toBeNull();
  });
});

describe('a hold request against a stored hold', () => {
  const body = { bookingId: 'b1', buyerId: 'buyer', buyerRef: 'MKT-USR-1', sellerId: 'seller', amountMinor: 100_00, currency: 'ETB' };
  const wallet = { _id: 'w-buyer', currency: 'ETB' } as WalletSummary;

  test('the buyer’s wallet holds the booking’s currency, else 422 currency_mismatch', () => {
    expect(newHold(body, wallet, 'c')).toMatchObject({ buyerWalletId: 'w-buyer', status: 'Pending', hold: 'pending', endsAt: null });
    expect(() => newHold({ ...body, currency: 'USD' }, wallet, 'c')).toThrow(CurrencyMismatch);
  });

  test.each([
    ['the same terms', {}, false],
    ['another amount', { amountMinor: 1 }, true],
    ['another buyer', { buyerId: 'x' }, true],
    ['another seller', { sellerId: 'x' }, true],
  ] as const)('%s: conflict %s', (_name, change, conflict) => {
    const check = () => checkHoldTerms(hold(), { ...body, ...change });
    if (conflict) expect(check).toThrow(Conflict);
    else expect(check).not.toThrow();
  });

  test('a voided booking answers as it is, whatever the terms', () => {
    expect(() => checkHoldTerms(hold({ status: 'Voided', amountMinor: 0 }), body)).not.toThrow();
  });

  test('the sweep carries late steps on the decision’s correlation id, else the booking’s, else its id', () => {
    const settlement = { ...settlementOf('capture', 1, 0, 0), decidedAt: new Date(0), correlationId: 'decision' };
    expect(holdCorrelationId(hold({ settlement }))).toBe('decision');
    expect(holdCorrelationId(hold())).toBe('booking-corr');
    expect(holdCorrelationId(hold({ correlationId: null }))).toBe('b1');
  });
});
