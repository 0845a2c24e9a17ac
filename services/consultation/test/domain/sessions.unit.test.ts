import {
  checkDispute,
  checkMove,
  confirmedOf,
  moveEvent,
  moveTime,
  noShowFrom,
  overdueBefore,
  overdueEnd,
  slotKeyOf,
  type SessionMove,
} from '../../src/domain/sessions';
import { admin, buyer, refusal, seller, session, T0, user } from './unit-fixtures';

// The session rules of the README ("Sessions", "Delivered", "Every hold ends …"), without a server.

const slotStart = new Date('2030-05-06T07:00:00.000Z');
const slot = { startsAt: slotStart, startedAt: null };
const minutes = (n: number) => new Date(slotStart.getTime() + n * 60_000);
const iso = (n: number) => minutes(n).toISOString();

describe('the state machine: who moves a session, from which state', () => {
  test.each([
    ['start a Scheduled session with someone booked', seller, 'start', {}, -10, undefined],
    ['an admin starts it', admin, 'start', {}, -10, undefined],
    ['another seller', user('seller', 'other'), 'start', {}, -10, { status: 403, code: 'forbidden' }],
    ['start with nobody booked', seller, 'start', { participantCount: 0 }, -10, { status: 409, code: 'invalid_state' }],
    ['start an In Progress session', seller, 'start', { status: 'In Progress' }, -10, { status: 409, code: 'invalid_state' }],
    ['end an In Progress session', seller, 'end', { status: 'In Progress' }, 10, undefined],
    ['end a Scheduled session', seller, 'end', {}, 10, { status: 409, code: 'invalid_state' }],
    ['end a Completed session', seller, 'end', { status: 'Completed' }, 10, { status: 409, code: 'invalid_state' }],
    ['no-show once the grace (a quarter of the hour) has passed', seller, 'no-show', {}, 15, undefined],
    ['no-show within the grace', seller, 'no-show', {}, 14, { status: 422, code: 'no_show_too_early' }],
    ['no-show in the slot’s first second', seller, 'no-show', {}, 0.005, { status: 422, code: 'no_show_too_early' }],
    ['no-show before the start', seller, 'no-show', {}, -1, { status: 422, code: 'no_show_too_early' }],
    ['no-show of an In Progress session', seller, 'no-show', { status: 'In Progress' }, 20, { status: 409, code: 'invalid_state' }],
    ['a buyer moving it', buyer, 'start', {}, -10, { status: 403, code: 'forbidden' }],
  ] as const)('%s', (_case, who, move, fields, at, expected) => {
    expect(refusal(() => checkMove(who, session({ startsAt: slotStart, ...fields }), move as SessionMove, minutes(at)))).toEqual(expected);
  });

  test('the no-show grace: the larger of its minutes and its share of the slot', () => {
    const of = (minutesLong: number) => ({ startsAt: slotStart, endsAt: minutes(minutesLong) });
    expect(noShowFrom(of(60))).toEqual(minutes(15));
    expect(noShowFrom(of(30))).toEqual(minutes(10));
    expect(noShowFrom(of(120), { minMs: 5 * 60_000, sharePercent: 50 })).toEqual(minutes(60));
    expect(noShowFrom(of(60), { minMs: 0, sharePercent: 0 })).toEqual(slotStart);
    const within = session({ startsAt: slotStart, endsAt: minutes(60) });
    expect(refusal(() => checkMove(seller, within, 'no-show', minutes(4), { minMs: 5 * 60_000, sharePercent: 0 }))).toEqual({
      status: 422,
      code: 'no_show_too_early',
    });
    expect(checkMove(seller, within, 'no-show', minutes(5), { minMs: 5 * 60_000, sharePercent: 0 })).toBe(within);
  });

  test('a dispute: only by a buyer booked on a No Show session, once per booking', () => {
    const noShow = session({ status: 'No Show' });
    const open = { _id: 'bk_1', dispute: null };
    const done = { _id: 'bk_2', dispute: { reason: 'x', at: T0, by: buyer.id } };
    expect(checkDispute(buyer, noShow, [open, done])).toEqual([open]);
    expect(refusal(() => checkDispute(buyer, null, []))).toEqual({ status: 404, code: 'not_found' });
    expect(refusal(() => checkDispute(seller, noShow, []))).toEqual({ status: 403, code: 'forbidden' });
    expect(refusal(() => checkDispute(buyer, session(), [open]))).toEqual({ status: 409, code: 'invalid_state' });
    expect(refusal(() => checkDispute(buyer, noShow, [done]))).toEqual({ status: 409, code: 'invalid_state' });
  });

  test('an unknown session is 404', () => {
    expect(refusal(() => checkMove(seller, null, 'start', T0))).toEqual({ status: 404, code: 'not_found' });
  });
});

describe('the times of a move must be ones that could have happened', () => {
  const lead = 15 * 60_000;
  test.each([
    ['start now, 10 minutes before the slot', 'start', slot, undefined, -10, minutes(-10)],
    ['start with an actualStartTime in the lead window', 'start', slot, iso(-14), -10, minutes(-14)],
    ['end now, after the slot began', 'end', { startsAt: slotStart, startedAt: minutes(-5) }, undefined, 50, minutes(50)],
    ['end with an actualEndTime up to 2 minutes ahead', 'end', { startsAt: slotStart, startedAt: minutes(-5) }, iso(52), 50, minutes(52)],
  ] as const)('%s', (_case, move, record, given, now, expected) => {
    expect(moveTime(move, record, given, minutes(now), lead)).toEqual(expected);
  });

  test.each([
    ['start more than 15 minutes early', 'start', slot, undefined, -16, { status: 422, code: 'too_early' }],
    ['an actualStartTime before the window', 'start', slot, iso(-16), -10, { status: 422, code: 'invalid', path: 'actualStartTime' }],
    ['an actualStartTime in the future', 'start', slot, iso(-5), -10, { status: 422, code: 'invalid', path: 'actualStartTime' }],
    [
      'end before the slot starts',
      'end',
      { startsAt: slotStart, startedAt: minutes(-5) },
      undefined,
      -1,
      { status: 422, code: 'too_early' },
    ],
    [
      'an actualEndTime before the slot',
      'end',
      { startsAt: slotStart, startedAt: minutes(-10) },
      iso(-1),
      5,
      { status: 422, code: 'too_early', path: 'actualEndTime' },
    ],
    [
      'an actualEndTime not after the start',
      'end',
      { startsAt: slotStart, startedAt: minutes(3) },
      iso(3),
      5,
      { status: 422, code: 'invalid', path: 'actualEndTime' },
    ],
    [
      'an actualEndTime in the future',
      'end',
      { startsAt: slotStart, startedAt: minutes(-5) },
      iso(60),
      50,
      { status: 422, code: 'invalid', path: 'actualEndTime' },
    ],
  ] as const)('refused: %s', (_case, move, record, given, now, expected) => {
    expect(refusal(() => moveTime(move, record, given, minutes(now), lead))).toEqual(expected);
  });

  test('a longer lead (SESSION_START_LEAD_MINUTES) lets a start come earlier', () => {
    expect(moveTime('start', slot, undefined, minutes(-60), 3 * 3_600_000)).toEqual(minutes(-60));
  });
});

describe('what a session tells and when the sweep ends it', () => {
  test('the Confirmed bookings, their buyers once each, the buyers who paid, and what each paid booking cost against its list price', () => {
    const confirmed = confirmedOf([
      { _id: 'bk_1', buyerId: 'b1', payment: 'held', subTotalMinor: 50_000, totalAmountMinor: 1 },
      { _id: 'bk_2', buyerId: 'b1', payment: 'held', subTotalMinor: 10_000, totalAmountMinor: 10_000 },
      { _id: 'bk_3', buyerId: 'b2', payment: 'free', subTotalMinor: 10_000, totalAmountMinor: 0 },
    ]);
    expect(confirmed).toEqual({
      buyerIds: ['b1', 'b2'],
      bookingIds: ['bk_1', 'bk_2', 'bk_3'],
      paidBuyerIds: ['b1'],
      payments: [
        { bookingId: 'bk_1', buyerId: 'b1', paidMinor: 1, listMinor: 50_000 },
        { bookingId: 'bk_2', buyerId: 'b1', paidMinor: 10_000, listMinor: 10_000 },
      ],
    });
  });

  test.each([
    ['end', 'consultation.session.completed', { endedAt: iso(60), paidBuyerIds: ['b1'], consultationReferenceId: 'MKT-CON-1' }],
    ['no-show', 'consultation.session.no_show', { markedAt: iso(60) }],
  ] as const)('%s publishes %s', (move, type, data) => {
    const confirmed = {
      buyerIds: ['b1'],
      bookingIds: ['bk_1'],
      paidBuyerIds: ['b1'],
      payments: [{ bookingId: 'bk_1', buyerId: 'b1', paidMinor: 100, listMinor: 100 }],
    };
    const event = moveEvent(session(), move, minutes(60), confirmed, 'MKT-CON-1', 'corr');
    expect(event).toMatchObject({ type, correlationId: 'corr', data: { sessionId: 'ses_1', bookingIds: ['bk_1'], ...data } });
  });

  test.each([
    ['ended at its slot’s end', { startedAt: minutes(5) }, minutes(60)],
    ['never before its start', { startedAt: minutes(90) }, minutes(90)],
    ['without a recorded start, from the slot', { startedAt: null }, minutes(60)],
  ] as const)('an overdue In Progress session is %s', (_case, fields, expected) => {
    expect(overdueEnd({ startsAt: slotStart, endsAt: minutes(60), ...fields })).toEqual(expected);
  });

  test('overdue after the grace; a session of before its slot key was stored closes the key of its start', () => {
    expect(overdueBefore(minutes(120), { startLeadMs: 0, expiryGraceMs: 60 * 60_000 })).toEqual(minutes(60));
    expect(slotKeyOf({ slotKey: null, consultationId: 'con_1', startsAt: slotStart })).toBe(`con_1|${slotStart.toISOString()}`);
    expect(slotKeyOf({ slotKey: 'kept', consultationId: 'con_1', startsAt: slotStart })).toBe('kept');
  });
});
