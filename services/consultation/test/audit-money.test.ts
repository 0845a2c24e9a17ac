import http, { type IncomingHttpHeaders, type Server } from 'node:http';
import mongoose from 'mongoose';
import { makeEvent } from '@mkt/contracts';
import { call, type TestUser } from '@mkt/infra';
import { stopRuntime } from '@mkt/kit/runtime';
import { walletPaymentsConsumer } from '../src/events/payments.consumer';
import { bookingEventsConsumer } from '../../wallet/src/events/bookings.consumer';
import {
  as,
  bookingBody,
  couponChecksOf,
  daysAhead,
  DEFAULT_BUYER_BALANCE_MINOR,
  ensureWallet,
  givenOffer,
  listenFor,
  log,
  newUser,
  startConsultation,
  startWalletSide,
  tokenOf,
  type ConsultationApp,
  type Offer,
  models,
} from './harness';
import { balanceOf, bookingOf, eventually, holdOf } from './paid-harness';

/**
 * An outside audit's findings on the consultation's money and trust, replayed against the real wallet. The
 * service runs with a start lead of 30 days, so a seller can start a session of a slot a week
 * ahead (bookings are only taken for future slots); the sweeps are run by the tests with a
 * `now` of their choosing.
 */
interface Tapped {
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}
let app: ConsultationApp;
let tapServer: Server;
const tapped: Tapped[] = [];

/** Passes every request on to the wallet and its answer back, noting what the consultation sent. */
function tapInFrontOf(target: string): Promise<Server> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      tapped.push({ path: req.url ?? '', headers: req.headers, body: body ? JSON.parse(body) : {} });
      void fetch(`${target}${req.url}`, { method: req.method, headers: req.headers as Record<string, string>, body: body || undefined })
        .then(async (answer) => res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text()))
        .catch(() => res.writeHead(502).end());
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

beforeAll(async () => {
  const wallet = await startWalletSide();
  tapServer = await tapInFrontOf(wallet.url);
  const address = tapServer.address() as { port: number };
  const consultation = await startConsultation(`http://127.0.0.1:${address.port}`, undefined, { SESSION_START_LEAD_MINUTES: '43200' });
  await wallet.bus.consume({ ...bookingEventsConsumer(wallet.parts.holds), retryDelaysMs: [200, 1_000] });
  await consultation.bus.consume({ ...walletPaymentsConsumer(consultation.parts.bookings), retryDelaysMs: [200, 1_000] });
  app = { ...consultation, wallet };
});
afterAll(async () => {
  await stopRuntime(app.started);
  await stopRuntime(app.wallet.started);
  await new Promise((resolve) => tapServer.close(resolve));
  await mongoose.disconnect();
});

const api = () => app;
const GRACE_MS = 60 * 60_000;
const book = (buyer: TestUser, offer: Offer, overrides: object = {}) =>
  as(api, buyer)('POST', '/consultations/bookings', bookingBody(offer, overrides));
const start = (offer: Offer, sessionId: string) => as(api, offer.seller)('POST', `/consultations/sessions/${sessionId}/start`, {});

async function givenCoupon(offer: Offer, couponCode: string, discountValue: number) {
  const res = await as(api, offer.seller)('POST', '/consultations/pricing/promotional-discounts', {
    name: 'Audit',
    discountType: 'Percentage',
    discountValue,
    validFrom: new Date(Date.now() - 86_400_000).toISOString(),
    validTo: new Date(Date.now() + 86_400_000).toISOString(),
    couponCode,
    maxUses: 10,
    isActive: true,
  });
  expect(res.status).toBe(200);
}

describe('a paid booking joins only a Scheduled session (HIGH)', () => {
  test('after the seller started the session, a booking of its slot is 422 slot_unavailable and nothing is held', async () => {
    const offer = await givenOffer(api, { capacity: 5 });
    const first = await book(newUser(), offer);
    expect(first.body.data.status).toBe('Confirmed');
    expect((await start(offer, first.body.data.sessionId)).status).toBe(200);
    const late = newUser();
    const refused = await book(late, offer);
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0]).toMatchObject({ code: 'slot_unavailable' });
    expect(await balanceOf(late)).toEqual({ available: DEFAULT_BUYER_BALANCE_MINOR, held: 0 });
    expect(await models().Booking.countDocuments({ buyerId: late.id, status: { $in: ['Confirmed', 'PaymentPending'] } })).toBe(0);
    expect((await models().Session.findById(first.body.data.sessionId).lean())!.buyerIds).toHaveLength(1);
    // Nor is the slot offered: the listing shows it full, though four of its five places are free.
    const date = daysAhead(7);
    const listed = await as(api, late)('GET', `/consultations/${offer.consultationId}/slots?from=${date}&to=${date}`);
    expect(listed.body.data.slots.find((slot: { startTime: string }) => slot.startTime === '10:00')).toMatchObject({ remaining: 0 });
  });

  test('a hold answered after the session started is voided: 422, the booking Failed, the money and the place back', async () => {
    const offer = await givenOffer(api, { capacity: 5 });
    const first = await book(newUser(), offer);
    const sessionId = first.body.data.sessionId as string;
    expect((await start(offer, sessionId)).status).toBe(200);
    // As if the late booking had taken its place just before the slot closed (or the session
    // started before slots were closed): only the session's state stands in its way.
    const slotKey = (await models().Booking.findById(first.body.data.bookingId).lean())!.slotKey;
    await models().SlotPlace.updateOne({ _id: slotKey }, { $set: { closed: false } });
    const late = newUser();
    const refused = await book(late, offer);
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0]).toMatchObject({ code: 'slot_unavailable' });
    const [booking] = await models().Booking.find({ buyerId: late.id }).lean();
    expect(booking).toMatchObject({ status: 'Failed', payment: 'voided', compensated: expect.arrayContaining(['confirm', 'day', 'slot']) });
    expect(await holdOf(booking!._id)).toMatchObject({ settlement: { kind: 'void', captureMinor: 0 } });
    expect(await balanceOf(late)).toEqual({ available: DEFAULT_BUYER_BALANCE_MINOR, held: 0 });
    expect((await models().SlotPlace.findById(slotKey).lean())!.bookingIds).toEqual([first.body.data.bookingId]);
  });
});

describe('nothing is held without an end: the session sweep (HIGH)', () => {
  test('a session nobody moved expires after its slot’s end + grace: its bookings cancelled and refunded in full, its slot closed', async () => {
    const events = await listenFor(['consultation.booking.cancelled']);
    const offer = await givenOffer(api, { capacity: 5 });
    const buyer = newUser();
    const booked = await book(buyer, offer);
    const { bookingId, sessionId } = booked.body.data;
    const session = (await models().Session.findById(sessionId).lean())!;
    await app.parts.sessions.sweep(new Date(session.endsAt.getTime() + GRACE_MS - 60_000));
    expect((await models().Session.findById(sessionId).lean())!.status).toBe('Scheduled'); // within the grace
    await app.parts.sessions.sweep(new Date(session.endsAt.getTime() + GRACE_MS + 60_000));
    expect((await models().Session.findById(sessionId).lean())!.status).toBe('Expired');
    expect(await bookingOf(bookingId)).toMatchObject({
      status: 'Cancelled',
      refundAmountMinor: 500_00,
      cancelCause: 'session_expired',
      compensated: expect.arrayContaining(['confirm', 'day', 'slot']),
    });
    const event = await events.waitFor((e) => e.data.bookingId === bookingId);
    const stored = (await bookingOf(bookingId))!;
    expect(event).toMatchObject({
      correlationId: stored.correlationId,
      data: { refundAmountMinor: 500_00, totalAmountMinor: 500_00, cause: 'session_expired' },
    });
    expect(stored.correlationId).not.toBe(bookingId);
    await eventually(
      () => bookingOf(bookingId),
      (b) => b?.refundStatus === 'Refunded',
    );
    expect(await balanceOf(buyer)).toEqual({ available: DEFAULT_BUYER_BALANCE_MINOR, held: 0 });
    await app.parts.sessions.sweep(new Date(session.endsAt.getTime() + GRACE_MS + 120_000));
    await events.settle();
    expect(events.seen.filter((e) => e.data.bookingId === bookingId)).toHaveLength(1);
    await events.close();
    const after = await book(newUser(), offer);
    expect(after.status).toBe(422);
    expect(after.body.errors[0]).toMatchObject({ code: 'slot_unavailable' });
  });

  test('a session left In Progress is completed at its slot’s end by the sweep, naming who paid', async () => {
    const events = await listenFor(['consultation.session.completed']);
    const offer = await givenOffer(api, { capacity: 5 });
    await givenCoupon(offer, 'FREEAUDIT', 100);
    const payer = newUser();
    const paid = await book(payer, offer);
    const freeRider = newUser();
    const free = await book(freeRider, offer, { couponCode: 'FREEAUDIT', totalAmount: 0 });
    expect(free.body.data).toMatchObject({ status: 'Confirmed', sessionId: paid.body.data.sessionId });
    const sessionId = paid.body.data.sessionId as string;
    expect((await start(offer, sessionId)).status).toBe(200);
    const session = (await models().Session.findById(sessionId).lean())!;
    await app.parts.sessions.sweep(new Date(session.endsAt.getTime() + GRACE_MS + 60_000));
    expect(await models().Session.findById(sessionId).lean()).toMatchObject({ status: 'Completed', endedAt: session.endsAt });
    const event = await events.waitFor((e) => e.data.sessionId === sessionId);
    expect(event.data).toMatchObject({ endedAt: session.endsAt.toISOString(), paidBuyerIds: [payer.id] });
    expect(new Set(event.data.buyerIds as string[])).toEqual(new Set([payer.id, freeRider.id]));
    await events.close();
  });
});

/** What the wallet publishes when an admin voids a 500 ETB booking's hold by hand. */
const adminVoidOf = (bookingId: string, buyer: TestUser, offer: Offer) =>
  makeEvent(
    'wallet.booking_refund.completed',
    {
      bookingId,
      buyerId: buyer.id,
      sellerId: offer.seller.id,
      refundAmountMinor: 500_00,
      capturedAmountMinor: 0,
      currency: 'ETB',
      voidedByAdmin: true,
    },
    { source: 'wallet' },
  );

describe('an admin’s void of a hold (wallet.booking_refund.completed voidedByAdmin)', () => {
  test('a booking whose confirm has not landed yet can no longer be confirmed: no Confirmed booking without its money', async () => {
    const offer = await givenOffer(api);
    const buyer = newUser();
    const { bookingId } = (await book(buyer, offer)).body.data;
    // As if the wallet had answered Held and the admin voided it before the confirm was written.
    await models().Booking.updateOne({ _id: bookingId }, { $set: { status: 'PaymentPending', payment: 'pending' } });
    const refund = adminVoidOf(bookingId, buyer, offer);
    await walletPaymentsConsumer(app.parts.bookings).handlers['wallet.booking_refund.completed']!(refund, { log } as never);
    expect(await bookingOf(bookingId)).toMatchObject({ status: 'PaymentPending', payment: 'voiding' });
  });

  test('cancels the booking in full, Refunded, its place back, once', async () => {
    const events = await listenFor(['consultation.booking.cancelled']);
    const offer = await givenOffer(api);
    const buyer = newUser();
    const { bookingId } = (await book(buyer, offer)).body.data;
    const refund = adminVoidOf(bookingId, buyer, offer);
    const handle = walletPaymentsConsumer(app.parts.bookings).handlers['wallet.booking_refund.completed']!;
    await handle(refund, { log } as never);
    await handle(refund, { log } as never);
    const booking = (await bookingOf(bookingId))!;
    expect(booking).toMatchObject({
      status: 'Cancelled',
      refundStatus: 'Refunded',
      refundAmountMinor: 500_00,
      cancelCause: 'voided_by_admin',
      compensated: expect.arrayContaining(['confirm', 'day', 'slot']),
    });
    expect((await models().SlotPlace.findById(booking.slotKey).lean())!.bookingIds).toEqual([]);
    await events.waitFor((e) => e.data.bookingId === bookingId);
    await events.settle();
    expect(events.seen.filter((e) => e.data.bookingId === bookingId)).toEqual([
      expect.objectContaining({ data: expect.objectContaining({ cause: 'voided_by_admin', refundAmountMinor: 500_00 }) }),
    ]);
    await events.close();
  });
});

describe('a session is not ended before its slot starts (MEDIUM)', () => {
  test('end is 422 too_early before the slot starts, whatever actualEndTime says', async () => {
    const offer = await givenOffer(api);
    const { sessionId } = (await book(newUser(), offer)).body.data;
    expect((await start(offer, sessionId)).status).toBe(200);
    for (const body of [{}, { actualEndTime: new Date().toISOString() }]) {
      const ended = await as(api, offer.seller)('POST', `/consultations/sessions/${sessionId}/end`, body);
      expect(ended.status).toBe(422);
      expect(ended.body.errors[0]).toMatchObject({ code: 'too_early' });
    }
    expect((await models().Session.findById(sessionId).lean())!.status).toBe('In Progress');
  });

  test('an actualEndTime before the slot’s start is 422 too_early once the slot has begun', async () => {
    const offer = await givenOffer(api);
    const { sessionId } = (await book(newUser(), offer)).body.data;
    expect((await start(offer, sessionId)).status).toBe(200);
    const slotStart = new Date(Date.now() - 5 * 60_000);
    await models().Session.updateOne(
      { _id: sessionId },
      { $set: { startsAt: slotStart, startedAt: new Date(slotStart.getTime() - 10 * 60_000) } },
    );
    const ended = await as(api, offer.seller)('POST', `/consultations/sessions/${sessionId}/end`, {
      actualEndTime: new Date(slotStart.getTime() - 60_000).toISOString(),
    });
    expect(ended.status).toBe(422);
    expect(ended.body.errors[0]).toMatchObject({ code: 'too_early', path: 'actualEndTime' });
  });

  test('the hold request names the slot’s end and carries the request’s correlation id', async () => {
    const offer = await givenOffer(api);
    const buyer = newUser();
    await ensureWallet(buyer);
    const correlationId = `audit-${Date.now()}`;
    const res = await call(app.url, 'POST', '/consultations/bookings', {
      token: tokenOf(buyer),
      headers: { 'x-request-id': correlationId },
      body: bookingBody(offer),
    });
    expect(res.status).toBe(200);
    const booking = (await bookingOf(res.body.data.bookingId))!;
    expect(booking.correlationId).toBe(correlationId);
    const hold = tapped.find((t) => t.path === '/internal/holds' && t.body.bookingId === booking._id)!;
    expect(hold.body.endsAt).toBe(booking.endsAt.toISOString());
    // The booked consultation too: the seller's earnings show per consultation.
    expect(hold.body.consultationId).toBe(booking.consultationId);
    expect(hold.headers['x-correlation-id']).toBe(correlationId);
  });
});

describe('coupon codes cannot be guessed through bookings (LOW)', () => {
  test('a failed coupon counts against the validate-coupon throttle; one answer for every bad code; no total told', async () => {
    const offer = await givenOffer(api);
    await givenCoupon(offer, 'SECRET30', 30);
    const guesser = newUser();
    const unknown = await book(guesser, offer, { couponCode: 'NOPE' });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors[0]).toMatchObject({ code: 'coupon_invalid', message: 'This coupon code cannot be used' });
    const right = await book(guesser, offer, { couponCode: 'SECRET30' });
    expect(right.status).toBe(422);
    expect(right.body.errors[0]).toMatchObject({ code: 'price_mismatch', path: 'totalAmount' });
    expect(JSON.stringify(right.body)).not.toMatch(/350/);
    // Without a coupon the expected total is still told (it is the public price).
    expect((await book(guesser, offer, { totalAmount: 1 })).body.errors[0].message).toBe('totalAmount must be 500.00');
    // The throttle of validate-coupon: used up for this minute and the next (a test may cross a minute's end).
    const minute = Math.floor(Date.now() / 60_000) * 60_000;
    await Promise.allSettled(
      [minute, minute + 60_000].flatMap((at) => Array.from({ length: 20 }, () => app.parts.couponChecks.count(guesser.id, new Date(at)))),
    );
    for (const couponCode of ['NOPE2', 'SECRET30']) {
      const throttled = await book(guesser, offer, { couponCode });
      expect(throttled.status).toBe(429);
      expect(throttled.body.errors[0]).toMatchObject({ code: 'rate_limited' });
    }
    expect(await models().Booking.countDocuments({ buyerId: guesser.id })).toBe(0);
  });

  test('two failed guesses take two checks of the minute', async () => {
    const offer = await givenOffer(api);
    const guesser = newUser();
    const checks = async () => (await couponChecksOf(guesser.id)).reduce((sum, counter) => sum + counter.count, 0);
    await book(guesser, offer, { couponCode: 'GUESS1' });
    await book(guesser, offer, { couponCode: 'GUESS2' });
    expect(await checks()).toBe(2);
  });

  test('past the limit a right code answers 429 like a wrong one, even when another field is wrong (no 422 shows it through)', async () => {
    const offer = await givenOffer(api);
    await givenCoupon(offer, 'RIGHT30', 30);
    const guesser = newUser();
    // A wrong currency is refused after the coupon is read: it must not tell a right code apart.
    const probe = (couponCode: string) => book(guesser, offer, { couponCode, currency: 'USD' });
    for (let i = 0; i < 30; i += 1) if ((await probe(`WRONG${i}`)).status === 429) break;
    const right = await probe('RIGHT30');
    expect(right.status).toBe(429);
    expect(right.body.errors[0]).toMatchObject({ code: 'rate_limited' });
  });
});

describe('Idempotency-Key on POST /consultations/bookings', () => {
  const keyed = (buyer: TestUser, key: string, body: object) =>
    call(app.url, 'POST', '/consultations/bookings', { token: tokenOf(buyer), headers: { 'idempotency-key': key }, body });

  test('a retry with the same key and body gets the first answer and holds once; another body is 409', async () => {
    const offer = await givenOffer(api, { capacity: 5 });
    const buyer = newUser();
    await ensureWallet(buyer);
    const body = bookingBody(offer);
    const first = await keyed(buyer, 'retry-1', body);
    expect(first.status).toBe(200);
    const again = await keyed(buyer, 'retry-1', body);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(await models().Booking.countDocuments({ buyerId: buyer.id })).toBe(1);
    expect(await balanceOf(buyer)).toEqual({ available: DEFAULT_BUYER_BALANCE_MINOR - 500_00, held: 500_00 });
    const other = await keyed(buyer, 'retry-1', { ...body, notes: 'another request' });
    expect(other.status).toBe(409);
    // Keys are the user's own: another buyer's same key is another request.
    const stranger = newUser();
    await ensureWallet(stranger);
    expect((await keyed(stranger, 'retry-1', body)).body.data.bookingId).not.toBe(first.body.data.bookingId);
  });

  test('the same request however its JSON is spelled (its fields in another order) is replayed, not refused', async () => {
    const offer = await givenOffer(api, { capacity: 5 });
    const buyer = newUser();
    await ensureWallet(buyer);
    const body = bookingBody(offer);
    const first = await keyed(buyer, 'spelled-1', body);
    expect(first.status).toBe(200);
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    expect(JSON.stringify(reordered)).not.toBe(JSON.stringify(body));
    const again = await keyed(buyer, 'spelled-1', reordered);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(await models().Booking.countDocuments({ buyerId: buyer.id })).toBe(1);
    expect(await balanceOf(buyer)).toEqual({ available: DEFAULT_BUYER_BALANCE_MINOR - 500_00, held: 500_00 });
  });

  test('a refusal is replayed too: the same key does not book later, when the slot has come free', async () => {
    const offer = await givenOffer(api);
    const holder = newUser();
    const taken = await book(holder, offer);
    const buyer = newUser();
    await ensureWallet(buyer);
    const refused = await keyed(buyer, 'full-slot', bookingBody(offer));
    expect(refused.status).toBe(422);
    await as(api, holder)('POST', '/consultations/bookings/cancel', { bookingId: taken.body.data.bookingId });
    const again = await keyed(buyer, 'full-slot', bookingBody(offer));
    expect(again).toMatchObject({ status: 422, body: refused.body });
    expect(await models().Booking.countDocuments({ buyerId: buyer.id })).toBe(0);
  });
});

describe('SellerId by reference (ADR 0004)', () => {
  test('the seller’s USR reference names them as well as their id', async () => {
    const offer = await givenOffer(api);
    const res = await book(newUser(), offer, { SellerId: offer.seller.ref });
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe('Confirmed');
  });
});
