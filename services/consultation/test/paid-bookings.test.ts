import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { makeEvent } from '@mkt/contracts';
import { stopRuntime } from '@mkt/kit/runtime';
import { admin, as, bookingBody, daysAhead, givenOffer, newUser, startConsultation, models, walletModels, walletSide } from './harness';
import { balanceOf, bookingOf, deliverSession, eventually, holdOf, ledgerMatches, passSlotOf, usePaidPair } from './paid-harness';

const app = usePaidPair();

const book = (buyer = newUser(), offer: Awaited<ReturnType<typeof givenOffer>>, overrides: object = {}) =>
  as(app, buyer)('POST', '/consultations/bookings', bookingBody(offer, overrides));

/** Passes requests on to the wallet but never answers: the hold happens, the answer is lost. */
function blackHole(target: string): Promise<Server> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      void fetch(`${target}${req.url}`, { method: req.method, headers: req.headers as Record<string, string>, body: body || undefined });
      res.on('error', () => undefined);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe('paying for a booking', () => {
  test('with funds: Confirmed, the total held in the buyer’s wallet', async () => {
    const offer = await givenOffer(app);
    const buyer = newUser('buyer', { balanceMinor: 800_00 });
    const res = await book(buyer, offer);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ message: 'Booking confirmed', data: { status: 'Confirmed', totalAmount: 500 } });
    expect(await balanceOf(buyer)).toEqual({ available: 300_00, held: 500_00 });
    expect(await holdOf(res.body.data.bookingId)).toMatchObject({ status: 'Held', amountMinor: 500_00, sellerId: offer.seller.id });
    expect(await ledgerMatches(buyer)).toBe(true);
  });

  test('without funds: 422 insufficient_funds, the booking Failed, its place free again, nothing held', async () => {
    const offer = await givenOffer(app);
    const poor = newUser('buyer', { balanceMinor: 499_99 });
    const res = await book(poor, offer);
    expect(res.status).toBe(422);
    expect(res.body.errors[0].code).toBe('insufficient_funds');
    const failed = await models().Booking.findOne({ consultationId: offer.consultationId, buyerId: poor.id }).lean();
    expect(failed).toMatchObject({ status: 'Failed', payment: 'refused', compensated: expect.arrayContaining(['confirm', 'day', 'slot']) });
    expect(await models().SlotPlace.countDocuments({ consultationId: offer.consultationId, booked: { $gt: 0 } })).toBe(0);
    expect(await balanceOf(poor)).toEqual({ available: 499_99, held: 0 });
    expect((await book(newUser(), offer)).body.data.status).toBe('Confirmed');
    const listed = await as(app, poor)('GET', '/consultations/bookings?status=Failed');
    expect(listed.body.data.bookings).toEqual([expect.objectContaining({ id: failed!._id, status: 'Failed' })]);
  });

  test('a wallet that cannot pay this booking (another currency) declines at once: 422 payment_declined, places back', async () => {
    const offer = await givenOffer(app);
    await models().Pricing.updateOne({ _id: offer.pricingId }, { $set: { currency: 'USD' } });
    const buyer = newUser('buyer', { balanceMinor: 1_000_00 });
    const res = await book(buyer, offer, { currency: 'USD' });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].code).toBe('payment_declined');
    expect(await models().Booking.findOne({ consultationId: offer.consultationId }).lean()).toMatchObject({
      status: 'Failed',
      payment: 'declined',
    });
    expect(await models().SlotPlace.countDocuments({ consultationId: offer.consultationId, booked: { $gt: 0 } })).toBe(0);
    expect(await balanceOf(buyer)).toEqual({ available: 1_000_00, held: 0 });
  });

  test('a free booking (total 0) skips the wallet', async () => {
    const offer = await givenOffer(app, { basePrice: 0 });
    const broke = newUser('buyer', { balanceMinor: 0 });
    const res = await book(broke, offer, { subTotal: 0, totalAmount: 0 });
    expect(res.body.data.status).toBe('Confirmed');
    expect(await holdOf(res.body.data.bookingId)).toBeNull();
    const cancelled = await as(app, broke)('POST', '/consultations/bookings/cancel', { bookingId: res.body.data.bookingId });
    expect(cancelled.body.data).toMatchObject({ status: 'Cancelled', refundStatus: 'Refunded', refundAmount: 0 });
  });

  test('racing bookings against one wallet never overdraw it', async () => {
    const offer = await givenOffer(app, { capacity: 20 });
    const buyer = newUser('buyer', { balanceMinor: 2_200_00 });
    const results = await Promise.all(
      ['09:00', '10:00', '11:00', '12:00', '13:00', '14:00', '15:00', '16:00'].map((startTime) =>
        book(buyer, offer, { startTime, endTime: `${String(Number(startTime.slice(0, 2)) + 1).padStart(2, '0')}:00` }),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(4);
    expect(results.filter((r) => r.status === 422 && r.body.errors[0].code === 'insufficient_funds')).toHaveLength(4);
    expect(await balanceOf(buyer)).toEqual({ available: 200_00, held: 2_000_00 });
    expect(await models().Booking.countDocuments({ buyerId: buyer.id, status: 'Confirmed' })).toBe(4);
    expect(await ledgerMatches(buyer)).toBe(true);
  });
});

describe('after the booking', () => {
  test('a completed session credits the seller exactly once, even when the event comes twice', async () => {
    const offer = await givenOffer(app);
    const buyer = newUser('buyer', { balanceMinor: 500_00 });
    const booked = await book(buyer, offer);
    await deliverSession(app, offer.seller, booked.body.data.sessionId);
    await eventually(
      () => balanceOf(offer.seller),
      (b) => b.available === 500_00,
    );
    // The same fact delivered again (a redelivery is a copy with its own id at worst).
    await app().bus.publish(
      makeEvent(
        'consultation.session.completed',
        {
          sessionId: booked.body.data.sessionId,
          consultationId: offer.consultationId,
          sellerId: offer.seller.id,
          buyerIds: [buyer.id],
          endedAt: new Date().toISOString(),
          bookingIds: [booked.body.data.bookingId],
        },
        { source: 'consultation' },
      ),
    );
    await eventually(
      () => holdOf(booked.body.data.bookingId),
      (h) => h?.status === 'Settled',
    );
    expect(await balanceOf(offer.seller)).toEqual({ available: 500_00, held: 0 });
    expect(await balanceOf(buyer)).toEqual({ available: 0, held: 0 });
    expect(await ledgerMatches(offer.seller)).toBe(true);
    expect(await ledgerMatches(buyer)).toBe(true);
    const late = await as(app, buyer)('POST', '/consultations/bookings/cancel', { bookingId: booked.body.data.bookingId });
    expect(late.status).toBe(422);
    expect(late.body.errors[0].code).toBe('cancellation_closed');
  });

  test('a no-show of the buyer is captured for the seller too, once its dispute window (a day) is over', async () => {
    const offer = await givenOffer(app);
    const buyer = newUser('buyer', { balanceMinor: 500_00 });
    const booked = await book(buyer, offer);
    await passSlotOf(booked.body.data.sessionId, 3_600_000);
    expect((await as(app, offer.seller)('POST', `/consultations/sessions/${booked.body.data.sessionId}/no-show`, {})).status).toBe(200);
    await eventually(
      () => holdOf(booked.body.data.bookingId),
      (h) => h?.status === 'Settling' && h.settlement?.kind === 'capture',
    );
    await walletSide().holds.resume(new Date(Date.now() + 23 * 3_600_000));
    expect(await balanceOf(offer.seller)).toEqual({ available: 0, held: 0 });
    await walletSide().holds.resume(new Date(Date.now() + 25 * 3_600_000));
    expect(await balanceOf(offer.seller)).toEqual({ available: 500_00, held: 0 });
    expect(await balanceOf(buyer)).toEqual({ available: 0, held: 0 });
  });

  test('cancelled before the start: the refund asked for goes back once, the rest to the seller; Refunded', async () => {
    const offer = await givenOffer(app);
    const buyer = newUser('buyer', { balanceMinor: 600_00 });
    const booked = await book(buyer, offer);
    const id = booked.body.data.bookingId;
    const cancel = () => as(app, buyer)('POST', '/consultations/bookings/cancel', { bookingId: id, refundAmount: 300 });
    const res = await cancel();
    expect(res.body.data).toMatchObject({ status: 'Cancelled', refundStatus: 'Pending', refundAmount: 300 });
    expect((await cancel()).status).toBe(409);
    const refunded = await eventually(
      () => as(app, buyer)('GET', `/consultations/bookings/${id}`),
      (r) => r.body.data?.refundStatus === 'Refunded',
    );
    expect(refunded.body.data).toMatchObject({ status: 'Cancelled', refundAmount: 300 });
    expect(await balanceOf(buyer)).toEqual({ available: 400_00, held: 0 });
    expect(await balanceOf(offer.seller)).toEqual({ available: 200_00, held: 0 });
    expect((await bookingOf(id))!.refundedAt).not.toBeNull();
    expect(await ledgerMatches(buyer)).toBe(true);
  });

  test('the seller cancelling refunds in full, whatever amount is sent', async () => {
    const offer = await givenOffer(app);
    const buyer = newUser('buyer', { balanceMinor: 500_00 });
    const booked = await book(buyer, offer);
    const res = await as(app, offer.seller)('POST', '/consultations/bookings/cancel', {
      bookingId: booked.body.data.bookingId,
      refundAmount: 10,
    });
    expect(res.body.data).toMatchObject({ status: 'Cancelled', refundAmount: 500 });
    await eventually(
      () => bookingOf(booked.body.data.bookingId),
      (b) => b?.refundStatus === 'Refunded',
    );
    expect(await balanceOf(buyer)).toEqual({ available: 500_00, held: 0 });
    expect(await balanceOf(offer.seller)).toEqual({ available: 0, held: 0 });
  });
});

describe('when the wallet does not answer in time', () => {
  test('the booking answers PaymentPending; after a restart the sweep confirms it, held once', async () => {
    const hole = await blackHole(app().wallet.url);
    const cut = await startConsultation(`http://127.0.0.1:${(hole.address() as AddressInfo).port}`, undefined, {
      WALLET_TIMEOUT_MS: '500',
    });
    try {
      const offer = await givenOffer(app);
      const buyer = newUser('buyer', { balanceMinor: 700_00 });
      const res = await as(() => cut, buyer)('POST', '/consultations/bookings', bookingBody(offer));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ message: 'Booking payment pending', data: { status: 'PaymentPending' } });
      const id = res.body.data.bookingId;
      await eventually(
        () => holdOf(id),
        (h) => h?.status === 'Held',
      ); // the wallet did hold
      // The consultation service dies here, between the hold and the confirm; another starts.
      await stopRuntime(cut.started);
      const later = new Date(Date.now() + 60_000);
      await app().parts.bookings.sweep(later);
      await app().parts.bookings.sweep(later);
      expect(await bookingOf(id)).toMatchObject({ status: 'Confirmed', payment: 'held' });
      expect(await balanceOf(buyer)).toEqual({ available: 200_00, held: 500_00 });
      expect((await as(app, buyer)('GET', `/consultations/bookings/${id}`)).body.data.status).toBe('Confirmed');
    } finally {
      await new Promise((resolve) => hole.close(resolve));
      hole.closeAllConnections();
    }
  });

  test('past its deadline the sweep gives it up: voided at the wallet, Failed, its places back', async () => {
    const hole = await blackHole(app().wallet.url);
    const cut = await startConsultation(`http://127.0.0.1:${(hole.address() as AddressInfo).port}`, undefined, {
      WALLET_TIMEOUT_MS: '300',
    });
    try {
      const offer = await givenOffer(app);
      const buyer = newUser('buyer', { balanceMinor: 700_00 });
      const res = await as(() => cut, buyer)('POST', '/consultations/bookings', bookingBody(offer));
      const id = res.body.data.bookingId;
      expect(res.body.data.status).toBe('PaymentPending');
      await eventually(
        () => holdOf(id),
        (h) => h?.status === 'Held',
      );
      await app().parts.bookings.sweep(new Date(Date.now() + 24 * 3_600_000));
      expect(await bookingOf(id)).toMatchObject({
        status: 'Failed',
        payment: 'voided',
        compensated: expect.arrayContaining(['confirm', 'day', 'slot']),
      });
      expect(await balanceOf(buyer)).toEqual({ available: 700_00, held: 0 });
      expect(await models().SlotPlace.countDocuments({ consultationId: offer.consultationId, booked: { $gt: 0 } })).toBe(0);
      expect(await ledgerMatches(buyer)).toBe(true);
    } finally {
      await stopRuntime(cut.started);
      await new Promise((resolve) => hole.close(resolve));
      hole.closeAllConnections();
    }
  });
});

describe('a PaymentPending booking given up', () => {
  async function pendingBooking(buyer: ReturnType<typeof newUser>) {
    const hole = await blackHole(app().wallet.url);
    const cut = await startConsultation(`http://127.0.0.1:${(hole.address() as AddressInfo).port}`, undefined, {
      WALLET_TIMEOUT_MS: '300',
    });
    const offer = await givenOffer(app);
    const res = await as(() => cut, buyer)('POST', '/consultations/bookings', bookingBody(offer));
    expect(res.body.data.status).toBe('PaymentPending');
    await eventually(
      () => holdOf(res.body.data.bookingId),
      (h) => h?.status === 'Held',
    );
    await stopRuntime(cut.started);
    hole.closeAllConnections();
    await new Promise((resolve) => hole.close(resolve));
    return { offer, id: res.body.data.bookingId as string };
  }

  test('the buyer cancels it: voided at the wallet, Cancelled, nothing kept, its place free', async () => {
    const buyer = newUser('buyer', { balanceMinor: 600_00 });
    const { offer, id } = await pendingBooking(buyer);
    const res = await as(app, buyer)('POST', '/consultations/bookings/cancel', { bookingId: id });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'Cancelled', refundAmount: 0 });
    expect(await bookingOf(id)).toMatchObject({
      status: 'Cancelled',
      payment: 'voided',
      cancelledBy: 'buyer',
      compensated: expect.arrayContaining(['confirm', 'day', 'slot']),
    });
    expect(await balanceOf(buyer)).toEqual({ available: 600_00, held: 0 });
    expect(await models().SlotPlace.countDocuments({ consultationId: offer.consultationId, booked: { $gt: 0 } })).toBe(0);
    expect((await as(app, buyer)('POST', '/consultations/bookings/cancel', { bookingId: id })).status).toBe(409);
  });

  test('once being given up it never confirms, even though the wallet holds the money', async () => {
    const buyer = newUser('buyer', { balanceMinor: 600_00 });
    const { id } = await pendingBooking(buyer);
    // Another replica began giving it up (its deadline) while this one's hold answer was "held".
    await models().Booking.updateOne({ _id: id }, { $set: { payment: 'voiding' } });
    await app().parts.bookings.sweep(new Date(Date.now() + 60_000));
    expect(await bookingOf(id)).toMatchObject({ status: 'Failed', payment: 'voided' });
    expect(await balanceOf(buyer)).toEqual({ available: 600_00, held: 0 });
    expect(await ledgerMatches(buyer)).toBe(true);
  });
});

test('the slots of a day still list after paid bookings (sanity of the shared harness)', async () => {
  const offer = await givenOffer(app);
  await book(newUser(), offer);
  const slots = await as(app, undefined)('GET', `/consultations/${offer.consultationId}/slots?from=${daysAhead(7)}&to=${daysAhead(7)}`);
  expect(slots.body.data.slots.find((s: { startTime: string }) => s.startTime === '10:00')).toMatchObject({ remaining: 0 });
});

describe('no-shows: a grace into the slot, then a capture the buyer may dispute and an admin may void', () => {
  const walletAs = (user: ReturnType<typeof newUser>) => as(() => app().wallet, user);
  /** The session's slot (an hour long) begun `agoMs` ago, and its holds' `endsAt` with it. */
  async function slotBegun(sessionId: string, agoMs: number): Promise<void> {
    const startsAt = new Date(Date.now() - agoMs);
    const endsAt = new Date(startsAt.getTime() + 3_600_000);
    await models().Session.updateOne({ _id: sessionId }, { $set: { startsAt, endsAt } });
    const bookingIds = (await models().Booking.find({ sessionId }, { _id: 1 }).lean()).map((booking) => booking._id);
    await walletModels().BookingHold.updateMany({ _id: { $in: bookingIds } }, { $set: { endsAt } });
  }

  test('a no-show marked in the slot’s first second is 422 no_show_too_early and changes nothing; nor can the buyer dispute a session not marked', async () => {
    const offer = await givenOffer(app);
    const buyer = newUser('buyer', { balanceMinor: 500_00 });
    const booked = await book(buyer, offer);
    const sessionId = booked.body.data.sessionId as string;
    await slotBegun(sessionId, 300);
    const early = await as(app, offer.seller)('POST', `/consultations/sessions/${sessionId}/no-show`, {});
    expect(early.status).toBe(422);
    expect(early.body.errors[0].code).toBe('no_show_too_early');
    expect((await models().Session.findById(sessionId).lean())!.status).toBe('Scheduled');
    expect(await holdOf(booked.body.data.bookingId)).toMatchObject({ status: 'Held', settlement: null });
    expect(await balanceOf(buyer)).toEqual({ available: 0, held: 500_00 });
    const dispute = await as(app, buyer)('POST', `/consultations/sessions/${sessionId}/dispute`, { reason: 'Not marked yet' });
    expect(dispute.status).toBe(409);
  });

  test('marked after the grace: the buyer disputes, the capture waits past its window, the admin finds it and voids it — all back to the buyer, once', async () => {
    const offer = await givenOffer(app);
    const buyer = newUser('buyer', { balanceMinor: 500_00 });
    const booked = await book(buyer, offer);
    const { sessionId, bookingId } = booked.body.data as { sessionId: string; bookingId: string };
    await passSlotOf(sessionId, 3_600_000);
    expect((await as(app, offer.seller)('POST', `/consultations/sessions/${sessionId}/no-show`, {})).status).toBe(200);
    await eventually(
      () => holdOf(bookingId),
      (h) => h?.status === 'Settling' && h.settlement?.kind === 'capture',
    );

    // Only the buyer disputes, once.
    expect((await as(app, offer.seller)('POST', `/consultations/sessions/${sessionId}/dispute`, { reason: 'x' })).status).toBe(403);
    expect((await as(app, buyer)('POST', `/consultations/sessions/${sessionId}/dispute`, { reason: '  ' })).status).toBe(400);
    const disputed = await as(app, buyer)('POST', `/consultations/sessions/${sessionId}/dispute`, { reason: 'I waited 20 minutes' });
    expect(disputed.status).toBe(200);
    expect(disputed.body.data).toMatchObject({ sessionId, bookingIds: [bookingId], reason: 'I waited 20 minutes' });
    expect((await as(app, buyer)('POST', `/consultations/sessions/${sessionId}/dispute`, { reason: 'again' })).status).toBe(409);
    await eventually(
      () => holdOf(bookingId),
      (h) => h?.disputed === true,
    );
    // The admin's queue of disputes.
    const queue = await as(app, admin)('GET', '/consultations/bookings?disputed=true');
    expect(queue.body.data.bookings).toContainEqual(expect.objectContaining({ id: bookingId, disputed: true }));
    expect(
      (await as(app, buyer)('GET', '/consultations/bookings?disputed=true')).body.data.bookings.map((b: { id: string }) => b.id),
    ).toEqual([bookingId]);

    // Paused: past the dispute window, nothing moves while disputed.
    await walletSide().holds.resume(new Date(Date.now() + 48 * 3_600_000));
    expect(await balanceOf(offer.seller)).toEqual({ available: 0, held: 0 });
    const voided = await walletAs(admin)('POST', `/wallets/booking-holds/${bookingId}/void`, { reason: 'The seller never joined' });
    expect(voided.status).toBe(200);
    expect(voided.body.data).toMatchObject({ status: 'Settled', settlement: 'void', disputed: false });
    await eventually(
      () => bookingOf(bookingId),
      (b) => b?.status === 'Cancelled' && b.refundStatus === 'Refunded',
    );
    await walletSide().holds.resume(new Date(Date.now() + 48 * 3_600_000));
    expect(await balanceOf(buyer)).toEqual({ available: 500_00, held: 0 });
    expect(await balanceOf(offer.seller)).toEqual({ available: 0, held: 0 });
    expect(await ledgerMatches(buyer)).toBe(true);
  });
});
