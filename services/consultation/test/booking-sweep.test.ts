import { BookingRepository } from '../src/db/booking.repository';
import { owedGiveBacks } from '../src/migrations/0004-owed-give-backs';
import { as, bookingBody, givenOffer, log, newUser, useConsultationApp, models } from './harness';

/**
 * What a crash leaves behind, finished by the booking sweep: the states are made as the crash
 * would leave them (a real booking, then the write that did not happen taken back).
 */
const app = useConsultationApp();
const FREE = { subTotal: 0, totalAmount: 0 };

async function givenFreeBooking() {
  const offer = await givenOffer(app, { basePrice: 0 });
  const res = await as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer, FREE));
  expect(res.body.data.status).toBe('Confirmed');
  const booking = (await models().Booking.findById(res.body.data.bookingId).lean())!;
  return { offer, booking };
}

/** What the booking still holds: its place of the day, of the slot, and its session seat. */
async function holdingsOf(booking: { _id: string; slotKey: string; dayKey: string; sessionId: string | null }, sessionId: string) {
  const [slot, day, session] = await Promise.all([
    models().SlotPlace.findById(booking.slotKey).lean(),
    models().DayPlace.findById(booking.dayKey).lean(),
    models().Session.findById(sessionId).lean(),
  ]);
  return {
    slot: slot!.bookingIds.includes(booking._id) ? slot!.booked : 0,
    day: day!.bookingIds.includes(booking._id) ? day!.booked : 0,
    seat: session!.bookingIds.includes(booking._id) ? session!.participantCount : 0,
  };
}

/** Past the sweep's 60 s for a Pending booking. */
const later = () => new Date(Date.now() + 61_000);

describe('the booking sweep', () => {
  test('a booking a crash left Pending (places and seat taken, never confirmed) is Failed and gives everything back', async () => {
    const { offer, booking } = await givenFreeBooking();
    await models().Booking.collection.updateOne({ _id: booking._id } as object, { $set: { status: 'Pending', sessionId: null } });
    await app().parts.bookings.sweep(new Date());
    expect((await models().Booking.findById(booking._id).lean())!.status).toBe('Pending'); // younger than 60 s: being made
    await app().parts.bookings.sweep(later());
    expect((await models().Booking.findById(booking._id).lean())!.status).toBe('Failed');
    expect(await holdingsOf(booking, booking.sessionId!)).toEqual({ slot: 0, day: 0, seat: 0 });
    expect((await models().SlotPlace.findById(booking.slotKey).lean())!.booked).toBe(0);
    await app().parts.bookings.sweep(later());
    expect((await models().SlotPlace.findById(booking.slotKey).lean())!.booked).toBe(0);
    const next = await as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer, FREE));
    expect(next.body.data.status).toBe('Confirmed');
  });

  test('a Pending booking with a coupon use: the use comes back too', async () => {
    const offer = await givenOffer(app, { capacity: 5 });
    await as(app, offer.seller)('POST', '/consultations/pricing/promotional-discounts', {
      name: 'All of it',
      discountType: 'Percentage',
      discountValue: 100,
      validFrom: new Date(Date.now() - 86_400_000).toISOString(),
      validTo: new Date(Date.now() + 86_400_000).toISOString(),
      couponCode: 'FREEONE',
      maxUses: 1,
    });
    const res = await as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer, { couponCode: 'FREEONE', totalAmount: 0 }));
    expect(res.body.data.status).toBe('Confirmed');
    const coupon = () => models().Discount.findOne({ sellerId: offer.seller.id, couponCode: 'FREEONE' }).lean();
    expect((await coupon())!.uses).toBe(1);
    await models().Booking.collection.updateOne({ _id: res.body.data.bookingId } as object, {
      $set: { status: 'Pending', sessionId: null },
    });
    await app().parts.bookings.sweep(later());
    expect((await coupon())!).toMatchObject({ uses: 0, usedBy: [] });
  });

  test('a cancel whose release a crash interrupted: the sweep gives the places and the seat back, once', async () => {
    const { offer, booking } = await givenFreeBooking();
    await models().Booking.collection.updateOne({ _id: booking._id } as object, {
      $set: { status: 'Cancelled', compensated: [], owed: true },
    });
    await app().parts.bookings.sweep(new Date());
    expect((await models().Booking.findById(booking._id).lean())!.compensated).toEqual(['confirm', 'day', 'slot']);
    expect(await holdingsOf(booking, booking.sessionId!)).toEqual({ slot: 0, day: 0, seat: 0 });
    await app().parts.bookings.sweep(new Date());
    expect((await models().Session.findById(booking.sessionId).lean())!.participantCount).toBe(0);
    expect((await as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer, FREE))).body.data.status).toBe('Confirmed');
  });

  test('a booking a version before the booking flow cancelled (no `compensated`, no `owed` on its record): flagged by 0004, then given back and recorded', async () => {
    const { offer, booking } = await givenFreeBooking();
    // As a replica of the previous version leaves it during a rolling update: Cancelled, nothing given back yet.
    await models().Booking.collection.updateOne({ _id: booking._id } as object, {
      $set: { status: 'Cancelled' },
      $unset: { compensated: '', owed: '' },
    });
    await owedGiveBacks.up({ db: models().Booking.db, log, models: [], outboxSources: [] });
    expect(await models().Booking.collection.findOne({ _id: booking._id } as object)).toMatchObject({ owed: true });
    await app().parts.bookings.sweep(new Date());
    const after = (await models().Booking.collection.findOne({ _id: booking._id } as object))!;
    expect(after.compensated).toEqual(['confirm', 'day', 'slot']);
    expect(after).not.toHaveProperty('owed');
    expect(await holdingsOf(booking, booking.sessionId!)).toEqual({ slot: 0, day: 0, seat: 0 });
    expect((await as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer, FREE))).body.data.status).toBe('Confirmed');
  });

  test('each kind of unfinished booking has its own turn: many waiting for the wallet never keep a cancelled one from its give-back', async () => {
    const { booking } = await givenFreeBooking();
    await models().Booking.collection.updateOne({ _id: booking._id } as object, {
      $set: { status: 'Cancelled', compensated: [], owed: true },
    });
    const { _id, referenceId, ...rest } = booking;
    const waiting = ['a', 'b', 'c'].map((suffix) => ({
      ...rest,
      _id: `${_id}-${suffix}`,
      referenceId: `${referenceId}-${suffix}`,
      status: 'PaymentPending',
      updatedAt: new Date(Date.now() - 60_000),
    }));
    await models().Booking.collection.insertMany(waiting as never[]);
    const found = await new BookingRepository(models()).unfinished(new Date(), new Date(), 2);
    const ids = found.map((each) => each._id);
    expect(ids).toContain(booking._id);
    expect(ids.filter((id) => id.startsWith(`${_id}-`))).toHaveLength(2);
  });

  test('PaymentPending bookings whose retry keeps failing take their turn after the others: a read that changed nothing never returns the same ones first', async () => {
    const { booking } = await givenFreeBooking();
    // This file's database: only these three wait for the wallet.
    await models().Booking.collection.deleteMany({ status: 'PaymentPending' });
    const { _id, referenceId, ...rest } = booking;
    const waiting = ['a', 'b', 'c'].map((suffix, i) => ({
      ...rest,
      _id: `${_id}-${suffix}`,
      referenceId: `${referenceId}-${suffix}`,
      status: 'PaymentPending',
      updatedAt: new Date(Date.now() - 120_000 + i * 1000),
    }));
    await models().Booking.collection.insertMany(waiting as never[]);
    const repository = new BookingRepository(models());
    const mine = (found: Array<{ _id: string }>) => found.map((each) => each._id).filter((id) => id.startsWith(`${_id}-`));
    // Each read's retries fail (nothing written on the bookings): the next read starts with those not tried.
    expect(mine(await repository.unfinished(new Date(), new Date(), 2, new Date(Date.now() - 2_000)))).toEqual([`${_id}-a`, `${_id}-b`]);
    expect(mine(await repository.unfinished(new Date(), new Date(), 2, new Date(Date.now() - 1_000)))).toEqual([`${_id}-c`, `${_id}-a`]);
    expect(mine(await repository.unfinished(new Date(), new Date(), 2, new Date()))).toEqual([`${_id}-b`, `${_id}-a`]);
  });

  test('owed bookings whose give-back keeps failing take their turn after the others: 100 of them never fill the read every time', async () => {
    const { booking } = await givenFreeBooking();
    const { _id, referenceId, ...rest } = booking;
    // 100 given-up bookings whose day give-back fails on every try (their counter's `booked` is no
    // number: the database refuses the `$inc`), older than the one that can be given back.
    const broken = Array.from({ length: 100 }, (_, i) => ({
      ...rest,
      _id: `${_id}-broken-${String(i).padStart(3, '0')}`,
      referenceId: `${referenceId}-broken-${i}`,
      status: 'Cancelled',
      sessionId: null,
      dayKey: `${_id}-broken-day`,
      slotKey: `${_id}-broken-slot`,
      compensated: ['confirm'],
      owed: true,
      updatedAt: new Date(Date.now() - 120_000),
    }));
    await models().DayPlace.collection.insertOne({
      _id: `${_id}-broken-day`,
      consultationId: booking.consultationId,
      booked: 'not a number',
      bookingIds: broken.map((each) => each._id),
    } as never);
    // The one that can be given back is stored after them (a read in stored order reaches it last).
    await models().Booking.collection.deleteOne({ _id } as object);
    await models().Booking.collection.insertMany(broken as never[]);
    await models().Booking.collection.insertOne({ ...booking, status: 'Cancelled', compensated: [], owed: true } as never);

    await app().parts.bookings.sweep(new Date());
    expect((await models().Booking.findById(broken[0]!._id).lean())!.compensated).toEqual(['confirm']); // still failing
    await app().parts.bookings.sweep(new Date());
    const after = (await models().Booking.collection.findOne({ _id } as object))!;
    expect(after.compensated).toEqual(['confirm', 'day', 'slot']);
    expect(after).not.toHaveProperty('owed');
    expect(after).not.toHaveProperty('owedTriedAt');
    expect(await holdingsOf(booking, booking.sessionId!)).toEqual({ slot: 0, day: 0, seat: 0 });
  });

  test('a Failed booking whose give-back a crash interrupted: finished, each give-back recorded', async () => {
    const { booking } = await givenFreeBooking();
    await models().Booking.collection.updateOne({ _id: booking._id } as object, {
      $set: { status: 'Failed', compensated: [], owed: true },
    });
    await app().parts.bookings.sweep(new Date());
    expect((await models().Booking.findById(booking._id).lean())!.compensated).toEqual(['confirm', 'day', 'slot']);
    expect(await holdingsOf(booking, booking.sessionId!)).toEqual({ slot: 0, day: 0, seat: 0 });
  });

  test('a give-back a crash interrupted midway (the seat recorded given back): the sweep gives back the rest, in reverse order, once', async () => {
    const { offer, booking } = await givenFreeBooking();
    // As the flow left it: Failed, its seat given back (the session no longer lists it) and
    // recorded, then the crash before the day and the slot.
    await models().Session.updateOne(
      { _id: booking.sessionId },
      { $pull: { bookingIds: booking._id, buyerIds: booking.buyerId }, $inc: { participantCount: -booking.places } },
    );
    await models().Booking.collection.updateOne({ _id: booking._id } as object, {
      $set: { status: 'Failed', compensated: ['confirm'], owed: true },
    });
    await app().parts.bookings.sweep(new Date());
    await app().parts.bookings.sweep(new Date());
    expect((await models().Session.findById(booking.sessionId).lean())!.participantCount).toBe(0);
    expect((await models().Booking.findById(booking._id).lean())!.compensated).toEqual(['confirm', 'day', 'slot']);
    expect(await holdingsOf(booking, booking.sessionId!)).toEqual({ slot: 0, day: 0, seat: 0 });
    expect((await models().SlotPlace.findById(booking.slotKey).lean())!.booked).toBe(0);
    expect((await models().DayPlace.findById(booking.dayKey).lean())!.booked).toBe(0);
    expect((await as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer, FREE))).body.data.status).toBe('Confirmed');
  });

  test('a Pending booking that moves on between the sweep’s read and its give-up keeps its places and seat', async () => {
    const { booking } = await givenFreeBooking();
    await models().Booking.collection.updateOne({ _id: booking._id } as object, { $set: { status: 'Pending', sessionId: null } });
    // The request making it confirms it right after the sweep read it Pending (a slow request).
    const read = BookingRepository.prototype.unfinished;
    const spy = jest.spyOn(BookingRepository.prototype, 'unfinished').mockImplementationOnce(async function (
      this: BookingRepository,
      ...args
    ) {
      const found = await read.apply(this, args);
      await models().Booking.collection.updateOne({ _id: booking._id } as object, {
        $set: { status: 'Confirmed', sessionId: booking.sessionId },
      });
      return found;
    });
    try {
      await app().parts.bookings.sweep(later());
    } finally {
      spy.mockRestore();
    }
    expect((await models().Booking.findById(booking._id).lean())!).toMatchObject({ status: 'Confirmed', compensated: [] });
    expect(await holdingsOf(booking, booking.sessionId!)).toEqual({ slot: 1, day: 1, seat: 1 });
  });
});
