import { CancelBookingBody, CreateBookingBody } from '@mkt/contracts';
import {
  bookingStepStatus,
  cancellerOf,
  cancelWrite,
  checkBookable,
  confirmWrite,
  decideCancel,
  earlierAttempt,
  failureOf,
  givenUp,
  LAST_GIVE_BACK,
  newBooking,
  owedCheckDue,
  owesGiveBack,
  pastPaymentDeadline,
  placeBooking,
  priceBooking,
  readableBooking,
  stuckGivenUp,
  systemCancellation,
  unpaidOutcome,
} from '../../src/domain/bookings';
import type { BookingDoc, BookingStep, DiscountDoc } from '../../src/domain/records';
import { admin, booking, buyer, consultation, discount, pricing, refusal, ruleSet, seller, T0, user } from './unit-fixtures';

// The booking rules of the README ("Booking", "Paid bookings", "Cancel"), decided without a server.

const body = (fields: Record<string, unknown> = {}) =>
  CreateBookingBody.parse({
    SellerId: seller.id,
    consultationId: 'con_1',
    ruleSetId: 'rs-1',
    date: '2030-05-13',
    startTime: '10:00',
    endTime: '11:00',
    participants: [{ fullName: 'Sara Tesfaye', email: 'sara@example.com', phone: '+251911223344' }],
    subTotal: 500,
    totalAmount: 500,
    currency: 'ETB',
    ...fields,
  });

describe('who may book what', () => {
  test.each([
    ['a listed consultation, its seller named by id', buyer, {}, {}, undefined],
    ['its seller named by id in another case', buyer, { SellerId: seller.id.toUpperCase() }, {}, undefined],
    ['its seller named by USR reference', buyer, { SellerId: seller.ref }, {}, undefined],
    ['a Pending consultation', buyer, {}, { currentStatus: 'Pending' }, { status: 422, code: 'not_bookable' }],
    ['a Hidden consultation', buyer, {}, { visibility: 'Hidden' }, { status: 422, code: 'not_bookable' }],
    ['another seller named', buyer, { SellerId: 'someone' }, {}, { status: 422, code: 'invalid', path: 'SellerId' }],
    ['the seller booking their own', seller, {}, {}, { status: 403, code: 'forbidden' }],
  ] as const)('%s', (_case, who, fields, record, expected) => {
    expect(refusal(() => checkBookable(who, body(fields), consultation(record)))).toEqual(expected);
  });
});

describe('the slot, the participants and the subtotal', () => {
  const now = T0;
  test.each([
    ['a slot of the schedule', {}, {}, {}, undefined],
    ['the rule set named by reference', { ruleSetId: 'MKT-AVL-RST-1' }, {}, {}, undefined],
    ['another rule set', { ruleSetId: 'rs-2' }, {}, {}, { status: 422, code: 'invalid', path: 'ruleSetId' }],
    ['an inactive price', {}, {}, { isActive: false }, { status: 422, code: 'not_bookable' }],
    ['a time off the schedule', { startTime: '10:30', endTime: '11:30' }, {}, {}, { status: 422, code: 'slot_unavailable' }],
    ['an end that is not start + duration', { endTime: '12:00' }, {}, {}, { status: 422, code: 'slot_unavailable' }],
    ['outside the hours', { startTime: '18:00', endTime: '19:00' }, {}, {}, { status: 422, code: 'slot_unavailable' }],
    ['a past slot', { date: '2030-05-05' }, {}, {}, { status: 422, code: 'slot_unavailable' }],
    [
      'more participants than places',
      { participants: Array(3).fill(body().participants[0]) },
      {},
      {},
      { status: 422, code: 'slot_unavailable' },
    ],
  ] as const)('%s', (_case, fields, record, price, expected) => {
    expect(refusal(() => placeBooking(body(fields), consultation(record), ruleSet(), pricing(price), now))).toEqual(expected);
  });

  test('the subtotal is basePrice × participants; the slot is read in the consultation’s zone', () => {
    const two = body({ participants: Array(2).fill(body().participants[0]) });
    const placed = placeBooking(two, consultation(), ruleSet(), pricing(), T0);
    expect(placed.subTotalMinor).toBe(1000_00);
    expect(placed.slot.startsAt.toISOString()).toBe('2030-05-13T07:00:00.000Z');
  });
});

describe('the money of a booking (minor units, never floats)', () => {
  const coupon = (fields: Partial<DiscountDoc> = {}) => discount(fields);
  test.each([
    ['no coupon, the right figures', {}, null, { totalAmountMinor: 500_00 }],
    ['20 % off', { couponCode: 'SPRING', totalAmount: 400 }, coupon(), { totalAmountMinor: 400_00 }],
    [
      '33.33 % rounds to the santim',
      { couponCode: 'SPRING', totalAmount: 333.35 },
      coupon({ discountValue: 33.33 }),
      { totalAmountMinor: 333_35 },
    ],
    [
      'a fixed 100 off',
      { couponCode: 'SPRING', totalAmount: 400 },
      coupon({ discountType: 'Fixed', discountValue: 100_00 }),
      { totalAmountMinor: 400_00 },
    ],
    ['100 % off: free', { couponCode: 'SPRING', totalAmount: 0 }, coupon({ discountValue: 100 }), { totalAmountMinor: 0 }],
  ] as const)('%s', (_case, fields, found, expected) => {
    expect(priceBooking(body(fields), pricing(), 500_00, found, T0)).toEqual(expected);
  });

  test.each([
    ['an unknown coupon', { couponCode: 'NOPE' }, null, { status: 422, code: 'coupon_invalid', path: 'couponCode' }],
    [
      'an inactive coupon',
      { couponCode: 'SPRING' },
      coupon({ isActive: false }),
      { status: 422, code: 'coupon_invalid', path: 'couponCode' },
    ],
    [
      'an expired coupon',
      { couponCode: 'SPRING' },
      coupon({ validTo: new Date(T0.getTime() - 1) }),
      { status: 422, code: 'coupon_invalid', path: 'couponCode' },
    ],
    [
      'a coupon not yet valid',
      { couponCode: 'SPRING' },
      coupon({ validFrom: new Date(T0.getTime() + 1) }),
      { status: 422, code: 'coupon_invalid', path: 'couponCode' },
    ],
    ['a used-up coupon', { couponCode: 'SPRING' }, coupon({ uses: 10 }), { status: 422, code: 'coupon_invalid', path: 'couponCode' }],
    [
      'a fixed discount above the price',
      { couponCode: 'SPRING' },
      coupon({ discountType: 'Fixed', discountValue: 600_00 }),
      { status: 422, code: 'coupon_invalid', path: 'couponCode' },
    ],
    ['another currency', { currency: 'USD' }, null, { status: 422, code: 'price_mismatch', path: 'currency' }],
    ['a lower subtotal', { subTotal: 400 }, null, { status: 422, code: 'price_mismatch', path: 'subTotal' }],
    ['a lower total', { totalAmount: 1 }, null, { status: 422, code: 'price_mismatch', path: 'totalAmount' }],
  ] as const)('%s is refused', (_case, fields, found, expected) => {
    expect(refusal(() => priceBooking(body(fields), pricing(), 500_00, found, T0))).toEqual(expected);
  });

  test('a wrong total tells the right one without a coupon, never with one (it would reveal the discount)', () => {
    const told = (fields: Record<string, unknown>, found: DiscountDoc | null) => {
      try {
        priceBooking(body(fields), pricing(), 500_00, found, T0);
      } catch (err) {
        return (err as Error).message;
      }
    };
    expect(told({ totalAmount: 1 }, null)).toBe('totalAmount must be 500.00');
    expect(told({ couponCode: 'SPRING', totalAmount: 1 }, discount())).toBe('totalAmount does not match the price');
  });
});

describe('a new booking', () => {
  const plan = (totalAmountMinor: number) => {
    const placed = placeBooking(body(), consultation(), ruleSet(), pricing(), T0);
    return {
      consultation: consultation(),
      ruleSet: ruleSet(),
      pricing: pricing(),
      discount: null,
      startsAt: placed.slot.startsAt,
      endsAt: placed.slot.endsAt,
      subTotalMinor: 500_00,
      totalAmountMinor,
    };
  };
  const settings = (now: Date, deadlineMs = 15 * 60_000) => ({ payments: { deadlineMs }, correlationId: 'c', now });

  test.each([
    ['free: no deadline', 0, T0, 15 * 60_000, 'free', null],
    ['paid: deadline after PAYMENT_DEADLINE_MINUTES', 500_00, T0, 15 * 60_000, 'pending', '2030-05-06T06:15:00.000Z'],
    [
      'paid, close to its slot: the deadline is the slot’s start',
      500_00,
      new Date('2030-05-13T06:50:00.000Z'),
      15 * 60_000,
      'pending',
      '2030-05-13T07:00:00.000Z',
    ],
  ] as const)('%s', (_case, total, now, deadlineMs, payment, deadline) => {
    const made = newBooking('bk_9', buyer, body(), plan(total), settings(now, deadlineMs));
    expect(made).toMatchObject({ _id: 'bk_9', status: 'Pending', payment, places: 1, buyerRef: buyer.ref });
    expect(made.paymentDeadline?.toISOString() ?? null).toBe(deadline);
    expect(made.slotKey).toBe('con_1|2030-05-13T07:00:00.000Z');
    expect(made.dayKey).toBe('con_1|2030-05-13');
  });
});

describe('the payment of a booking', () => {
  test.each([
    ['refused (short of funds)', 'refused', 422, 'insufficient_funds'],
    ['declined (another currency)', 'declined', 422, 'payment_declined'],
    ['given up at its deadline', 'voided', 422, 'payment_failed'],
  ] as const)('a booking Failed when %s answers %s', (_case, payment, status, code) => {
    expect(failureOf({ payment })).toMatchObject({ status, code });
  });

  test.each([
    ['refused', null, { status: 'Failed', payment: 'refused', owed: true }],
    ['declined', null, { status: 'Failed', payment: 'declined', owed: true }],
    ['voided', null, { status: 'Failed', payment: 'voided', owed: true }],
    ['voided', 'buyer', { status: 'Cancelled', payment: 'voided', cancelledAt: T0, owed: true }],
  ] as const)('%s, cancelled by %s → %o', (answer, by, outcome) => {
    expect(unpaidOutcome(answer, by, T0)).toEqual(outcome);
  });

  test.each([
    ['pending, before its deadline', { payment: 'pending', paymentDeadline: new Date(T0.getTime() + 1) }, false],
    ['pending, at its deadline', { payment: 'pending', paymentDeadline: T0 }, true],
    ['a void under way', { payment: 'voiding', paymentDeadline: new Date(T0.getTime() + 1) }, true],
  ] as const)('the sweep gives up a booking %s: %s', (_case, fields, late) => {
    expect(pastPaymentDeadline(fields as Pick<BookingDoc, 'payment' | 'paymentDeadline'>, T0)).toBe(late);
  });

  test('a confirm is guarded by the state it leaves: Pending when free, PaymentPending + pending when paid', () => {
    expect(confirmWrite(booking({ status: 'Pending', payment: 'free' }), consultation(), 'ses_1', 'c')).toMatchObject({
      paid: false,
      guard: { status: 'Pending' },
      set: { status: 'Confirmed', sessionId: 'ses_1', payment: 'free' },
    });
    const paid = confirmWrite(booking({ status: 'PaymentPending', payment: 'pending' }), consultation(), 'ses_1', 'c');
    expect(paid).toMatchObject({ paid: true, guard: { status: 'PaymentPending', payment: 'pending' }, set: { payment: 'held' } });
    expect(paid.event).toMatchObject({ type: 'consultation.booking.confirmed', data: { bookingId: 'bk_1', totalAmountMinor: 500_00 } });
  });

  test.each([
    ['none made', null, null],
    ['still Pending', booking({ status: 'Pending' }), { inFlight: true }],
    ['Confirmed', booking(), { answer: booking() }],
  ] as const)('a retaken Idempotency-Key attempt whose booking is %s', (_case, earlier, expected) => {
    expect(earlierAttempt(earlier)).toEqual(expected);
  });
  test('a retaken attempt whose booking Failed answers its refusal', () => {
    expect(earlierAttempt(booking({ status: 'Failed', payment: 'refused' }))).toMatchObject({ refusal: { code: 'insufficient_funds' } });
  });
});

describe('reading and cancelling a booking', () => {
  const stranger = user('buyer', 'stranger');
  test.each([
    ['its buyer', buyer, booking(), undefined],
    ['its seller', seller, booking(), undefined],
    ['an admin', admin, booking(), undefined],
    ['someone else', stranger, booking(), { status: 404, code: 'not_found' }],
    ['a Pending one (being made)', buyer, booking({ status: 'Pending' }), { status: 404, code: 'not_found' }],
  ] as const)('read by %s', (_case, who, record, expected) => {
    expect(refusal(() => readableBooking(who, record))).toEqual(expected);
  });

  test.each([
    ['the buyer', buyer, booking(), 'buyer', undefined],
    ['the seller', seller, booking(), 'seller', undefined],
    ['an admin', admin, booking(), 'admin', undefined],
    ['someone else', stranger, booking(), null, { status: 403, code: 'forbidden' }],
    ['a Failed one', buyer, booking({ status: 'Failed' }), null, { status: 404, code: 'not_found' }],
    ['an unknown one', buyer, null, null, { status: 404, code: 'not_found' }],
  ] as const)('cancelled by %s', (_case, who, record, by, expected) => {
    expect(refusal(() => cancellerOf(who, record))).toEqual(expected);
    if (by) expect(cancellerOf(who, record).by).toBe(by);
  });

  const cancelBody = (fields: Record<string, unknown> = {}) => CancelBookingBody.parse({ bookingId: 'bk_1', ...fields });
  const before = T0; // the booking's slot is a week later
  test.each([
    ['the buyer, all by default', 'buyer', {}, 500_00],
    ['the buyer, part of it', 'buyer', { refundAmount: 120.5 }, 120_50],
    ['the buyer, no refund asked', 'buyer', { refundRequested: false }, 0],
    ['an admin, part of it', 'admin', { refundAmount: 100 }, 100_00],
    ['the seller, always in full', 'seller', { refundAmount: 1, refundRequested: false }, 500_00],
  ] as const)('refund when %s', (_case, by, fields, refundMinor) => {
    const decision = decideCancel(booking(), by, { status: 'Scheduled' }, cancelBody({ refundRequested: true, ...fields }), before);
    expect(decision).toMatchObject({ kind: 'confirmed', cancellation: { refundMinor, by, settled: false } });
  });

  test.each([
    [
      'more than was paid',
      booking(),
      { status: 'Scheduled' },
      { refundAmount: 500.01 },
      before,
      { status: 422, code: 'refund_too_large', path: 'refundAmount' },
    ],
    ['at its start', booking(), { status: 'Scheduled' }, {}, booking().startsAt, { status: 422, code: 'cancellation_closed' }],
    ['once its session started', booking(), { status: 'In Progress' }, {}, before, { status: 422, code: 'cancellation_closed' }],
    ['already Cancelled', booking({ status: 'Cancelled' }), null, {}, before, { status: 409, code: 'invalid_state' }],
  ] as const)('refused: %s', (_case, record, sessionState, fields, now, expected) => {
    expect(refusal(() => decideCancel(record, 'buyer', sessionState, cancelBody({ refundRequested: true, ...fields }), now))).toEqual(
      expected,
    );
  });

  test('a PaymentPending booking is given up (void) with what the request said', () => {
    const decision = decideCancel(
      booking({ status: 'PaymentPending', payment: 'pending' }),
      'buyer',
      null,
      cancelBody({ reason: 'Sick' }),
      before,
    );
    expect(decision).toEqual({ kind: 'unpaid', by: 'buyer', said: { cancelReason: 'Sick', cancellationType: null, cancelNotes: null } });
  });

  test('a free booking is Refunded at once (nothing owed back)', () => {
    const decision = decideCancel(booking({ payment: 'free', totalAmountMinor: 0 }), 'buyer', null, cancelBody(), before);
    expect(decision).toMatchObject({ cancellation: { refundMinor: 0, settled: true } });
  });

  test.each([
    ['session_expired, held', 'session_expired', 'held', { refundMinor: 500_00, by: null, settled: false }],
    ['session_expired, free', 'session_expired', 'free', { refundMinor: 500_00, by: null, settled: true }],
    ['voided_by_admin', 'voided_by_admin', 'held', { refundMinor: 500_00, by: 'admin', settled: true }],
  ] as const)('a cancel by the service: %s', (_case, cause, payment, expected) => {
    expect(systemCancellation(booking({ payment }), cause)).toEqual({ ...expected, cause });
  });

  test('the cancel write: Cancelled with its refund, and booking.cancelled naming the cause', () => {
    const { set, event } = cancelWrite(booking(), systemCancellation(booking(), 'session_expired'), 'c', T0);
    expect(set).toMatchObject({
      status: 'Cancelled',
      owed: true,
      refundStatus: 'Pending',
      refundedAt: null,
      refundAmountMinor: 500_00,
      cancelCause: 'session_expired',
    });
    expect(event).toMatchObject({ type: 'consultation.booking.cancelled', data: { refundAmountMinor: 500_00, cause: 'session_expired' } });
    expect(event.data).not.toHaveProperty('cancelledBy');
  });

  test('every move that gives a booking up owes its give-backs until the last one, the slot’s, is recorded', () => {
    expect(LAST_GIVE_BACK).toBe('slot');
    expect(stuckGivenUp()).toEqual({ status: 'Failed', owed: true });
    for (const answer of ['refused', 'declined', 'voided'] as const)
      for (const by of [null, 'buyer', 'seller', 'admin'] as const) expect(unpaidOutcome(answer, by, T0)).toHaveProperty('owed', true);
    const bySeller = decideCancel(booking({ payment: 'held' }), 'seller', null, CancelBookingBody.parse({ bookingId: 'bk_1' }), T0);
    if (bySeller.kind !== 'confirmed') throw new Error('a Confirmed booking is cancelled as confirmed');
    expect(cancelWrite(booking(), bySeller.cancellation, 'c', T0).set).toHaveProperty('owed', true);
  });
});

describe('a given-up booking owes a give-back until its last one is recorded', () => {
  test.each([
    ['Failed', [], true],
    ['Cancelled', undefined, true], // written before the flow: nothing recorded
    ['Cancelled', ['confirm', 'coupon', 'day'], true],
    ['Failed', ['confirm', 'day', 'slot'], false],
    ['Cancelled', ['confirm', 'coupon', 'day', 'slot'], false],
    ['Confirmed', [], false],
    ['PaymentPending', [], false],
    ['Pending', [], false],
  ] as const)('%s with %j given back: owes %s', (status, compensated, owes) => {
    const given = compensated === undefined ? { status } : { status, compensated: [...compensated] };
    expect(owesGiveBack(given)).toBe(owes);
  });

  test('the sweep looks for unflagged ones at its first run, then once its interval has passed since the last look', () => {
    const every = 10 * 60_000;
    const at = (ms: number) => new Date(T0.getTime() + ms);
    expect(owedCheckDue(null, T0, every)).toBe(true);
    expect(owedCheckDue(T0, T0, every)).toBe(false);
    expect(owedCheckDue(T0, at(every - 1), every)).toBe(false);
    expect(owedCheckDue(T0, at(every), every)).toBe(true);
    expect(owedCheckDue(at(every), T0, every)).toBe(false); // a clock that stepped back waits
  });
});

describe('the booking flow’s steps, read from the booking', () => {
  const STEPS: BookingStep[] = ['slot', 'day', 'coupon', 'hold', 'confirm'];
  const run = (fields: Partial<BookingDoc>, progress: { took?: BookingStep[]; refused?: BookingStep; abandoned?: boolean } = {}) => ({
    booking: booking(fields),
    took: progress.took ?? [],
    refused: progress.refused ?? null,
    abandoned: progress.abandoned ?? false,
  });
  const statuses = (r: ReturnType<typeof run>) => Object.fromEntries(STEPS.map((step) => [step, bookingStepStatus(r, step)]));

  test.each([
    [
      'being made, nothing taken yet (paid, with a coupon)',
      run({ status: 'Pending', payment: 'pending', couponId: 'dc_1' }),
      { slot: 'todo', day: 'todo', coupon: 'todo', hold: 'todo', confirm: 'todo' },
    ],
    [
      'being made, free, no coupon: the hold and the coupon are not part of it',
      run({ status: 'Pending', payment: 'free', couponId: null }, { took: ['slot'] }),
      { slot: 'done', day: 'todo', coupon: 'skip', hold: 'skip', confirm: 'todo' },
    ],
    [
      'the day refused while being made: the slot taken is given back, nothing else',
      run({ status: 'Pending', payment: 'pending', couponId: 'dc_1' }, { took: ['slot'], refused: 'day' }),
      { slot: 'done', day: 'failed', coupon: 'skip', hold: 'skip', confirm: 'skip' },
    ],
    [
      'abandoned while being made: everything it may hold is given back',
      run({ status: 'Pending', payment: 'free', couponId: 'dc_1' }, { abandoned: true }),
      { slot: 'done', day: 'done', coupon: 'done', hold: 'skip', confirm: 'done' },
    ],
    [
      'waiting for the wallet: its takes recorded by the move, the hold owed',
      run({ status: 'PaymentPending', payment: 'pending', couponId: null }),
      { slot: 'done', day: 'done', coupon: 'skip', hold: 'todo', confirm: 'todo' },
    ],
    [
      'held (the confirm records it)',
      run({ status: 'PaymentPending', payment: 'held', couponId: null }),
      { slot: 'done', day: 'done', coupon: 'skip', hold: 'done', confirm: 'todo' },
    ],
    [
      'Confirmed',
      run({ status: 'Confirmed', payment: 'held', couponId: null }),
      { slot: 'done', day: 'done', coupon: 'skip', hold: 'done', confirm: 'done' },
    ],
    [
      'refused by the wallet, half given back: the hold failed, what is recorded compensated',
      run({ status: 'Failed', payment: 'refused', couponId: 'dc_1', compensated: ['confirm', 'coupon'] }),
      { slot: 'done', day: 'done', coupon: 'compensated', hold: 'failed', confirm: 'compensated' },
    ],
    [
      'Cancelled after it was Confirmed, given back whole',
      run({ status: 'Cancelled', payment: 'held', couponId: null, compensated: ['confirm', 'day', 'slot'] }),
      { slot: 'compensated', day: 'compensated', coupon: 'skip', hold: 'done', confirm: 'compensated' },
    ],
    [
      'left Pending by a crash, then given up (Failed): everything it may hold is given back',
      run({ status: 'Failed', payment: 'pending', couponId: 'dc_1' }),
      { slot: 'done', day: 'done', coupon: 'done', hold: 'skip', confirm: 'done' },
    ],
  ])('%s', (_what, r, expected) => {
    expect(statuses(r)).toEqual(expected);
  });

  test('given up: Failed, Cancelled, refused or abandoned while being made; not while it is made or waits', () => {
    expect(givenUp(run({ status: 'Failed' }))).toBe(true);
    expect(givenUp(run({ status: 'Cancelled' }))).toBe(true);
    expect(givenUp(run({ status: 'Pending' }, { refused: 'slot' }))).toBe(true);
    expect(givenUp(run({ status: 'Pending' }, { abandoned: true }))).toBe(true);
    expect(givenUp(run({ status: 'Pending' }))).toBe(false);
    expect(givenUp(run({ status: 'PaymentPending' }))).toBe(false);
    expect(givenUp(run({ status: 'Confirmed' }))).toBe(false);
  });
});
