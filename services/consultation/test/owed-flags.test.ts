import { BookingRepository } from '../src/db/booking.repository';
import { as, bookingBody, givenOffer, newUser, useConsultationApp, models } from './harness';

/**
 * `owed` kept true to the records while processes of a version before the flag give bookings up
 * and give them back beside this one (a rolling update, a rollback and the release again): they
 * record the last give-back (`slot`) without removing `owed`, and give bookings up without setting
 * it. The states are made as such a process leaves them: a real booking, then its record written
 * as that process writes it.
 */
const app = useConsultationApp();
const FREE = { subTotal: 0, totalAmount: 0 };
const bookings = () => models().Booking.collection;
/** The look for unflagged give-backs, every OWED_CHECK_MINUTES (10 by default). */
const CHECK_MS = 10 * 60_000;

async function givenFreeBooking() {
  const offer = await givenOffer(app, { basePrice: 0 });
  const buyer = newUser();
  const res = await as(app, buyer)('POST', '/consultations/bookings', bookingBody(offer, FREE));
  expect(res.body.data.status).toBe('Confirmed');
  const booking = (await models().Booking.findById(res.body.data.bookingId).lean())!;
  return { offer, buyer, booking };
}

/** Cancelled by its buyer and given back whole, then `owed: true` as a process of a version before the flag leaves it. */
async function givenBackStillFlagged() {
  const { buyer, booking } = await givenFreeBooking();
  const res = await as(app, buyer)('POST', '/consultations/bookings/cancel', { bookingId: booking._id, reason: 'changed plans' });
  expect(res.body.data.status).toBe('Cancelled');
  await bookings().updateOne({ _id: booking._id } as never, { $set: { owed: true } });
  expect(await bookings().findOne({ _id: booking._id } as never)).toMatchObject({ compensated: ['confirm', 'day', 'slot'], owed: true });
  return booking;
}

/** What the booking still holds: its place of the slot, of the day, and its session seat. */
async function holdingsOf(booking: { _id: string; slotKey: string; dayKey: string; sessionId: string | null }) {
  const [slot, day, session] = await Promise.all([
    models().SlotPlace.findById(booking.slotKey).lean(),
    models().DayPlace.findById(booking.dayKey).lean(),
    models().Session.findById(booking.sessionId).lean(),
  ]);
  return {
    slot: slot!.bookingIds.includes(booking._id) ? slot!.booked : 0,
    day: day!.bookingIds.includes(booking._id) ? day!.booked : 0,
    seat: session!.bookingIds.includes(booking._id) ? session!.participantCount : 0,
  };
}

describe('the booking sweep keeps `owed` true to the records', () => {
  test('bookings given up without the flag after the migration ran are flagged by the sweep’s look (its first run, then every OWED_CHECK_MINUTES) and given back, once', async () => {
    /** Cancelled by a process of a version before the flag, which stopped before its give-back. */
    const givenUpUnflagged = async () => {
      const given = await givenFreeBooking();
      await bookings().updateOne({ _id: given.booking._id } as never, {
        $set: { status: 'Cancelled', compensated: [] },
        $unset: { owed: '' },
      });
      return given;
    };
    const givenBackOnce = async ({ booking }: Awaited<ReturnType<typeof givenFreeBooking>>) => {
      const after = (await bookings().findOne({ _id: booking._id } as never))!;
      expect(after.compensated).toEqual(['confirm', 'day', 'slot']);
      expect(after).not.toHaveProperty('owed');
      expect(await holdingsOf(booking)).toEqual({ slot: 0, day: 0, seat: 0 });
      expect((await models().SlotPlace.findById(booking.slotKey).lean())!.booked).toBe(0);
      expect((await models().DayPlace.findById(booking.dayKey).lean())!.booked).toBe(0);
      expect((await models().Session.findById(booking.sessionId).lean())!.participantCount).toBe(0);
    };
    const start = Date.now();
    const first = await givenUpUnflagged();
    // The sweep's first run in this process looks: flagged, then given back in the same sweep.
    await app().parts.bookings.sweep(new Date(start));
    await givenBackOnce(first);

    const second = await givenUpUnflagged();
    await app().parts.bookings.sweep(new Date(start + CHECK_MS - 1));
    // The last look is under OWED_CHECK_MINUTES old: not looked for yet, still holding its places.
    expect(await bookings().findOne({ _id: second.booking._id } as never)).not.toHaveProperty('owed');
    expect(await holdingsOf(second.booking)).toEqual({ slot: 1, day: 1, seat: 1 });
    await app().parts.bookings.sweep(new Date(start + CHECK_MS));
    await givenBackOnce(second);

    // Once: later looks and sweeps give nothing again.
    await app().parts.bookings.sweep(new Date(start + 2 * CHECK_MS));
    await app().parts.bookings.sweep(new Date(start + 3 * CHECK_MS));
    for (const given of [first, second]) {
      await givenBackOnce(given);
      expect((await as(app, newUser())('POST', '/consultations/bookings', bookingBody(given.offer, FREE))).body.data.status).toBe(
        'Confirmed',
      );
    }
  });

  test('bookings given back whole but still flagged never take the turn of one that owes: read past, their flag removed', async () => {
    const stale = [await givenBackStillFlagged(), await givenBackStillFlagged()];
    // Given up after them, its give-back interrupted by a crash: it owes everything.
    const { offer, booking } = await givenFreeBooking();
    await bookings().updateOne({ _id: booking._id } as never, { $set: { status: 'Cancelled', compensated: [], owed: true } });

    // The give-back read, with a limit as small as the flagged ones given back: the one owed is read.
    const found = await new BookingRepository(models()).unfinished(new Date(), new Date(), stale.length);
    expect(found.map(({ _id }) => _id)).toEqual([booking._id]);

    await app().parts.bookings.sweep(new Date());
    for (const { _id } of stale) {
      const doc = await bookings().findOne({ _id } as never);
      expect(doc).toMatchObject({ status: 'Cancelled', compensated: ['confirm', 'day', 'slot'] });
      expect(doc).not.toHaveProperty('owed');
    }
    const after = (await bookings().findOne({ _id: booking._id } as never))!;
    expect(after.compensated).toEqual(['confirm', 'day', 'slot']);
    expect(after).not.toHaveProperty('owed');
    expect(await holdingsOf(booking)).toEqual({ slot: 0, day: 0, seat: 0 });
    expect(await bookings().countDocuments({ owed: { $exists: true } })).toBe(0);
    expect((await as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer, FREE))).body.data.status).toBe('Confirmed');
  });

  test('the look flags at most its limit, the next look the rest; a booking whose last give-back is recorded is never flagged', async () => {
    const owing = await Promise.all([givenFreeBooking(), givenFreeBooking(), givenFreeBooking()]);
    for (const { booking } of owing)
      await bookings().updateOne({ _id: booking._id } as never, {
        $set: { status: 'Failed', compensated: ['confirm'] },
        $unset: { owed: '' },
      });
    // Given back whole by such a process: nothing owed, never flagged.
    const { buyer, booking: done } = await givenFreeBooking();
    await as(app, buyer)('POST', '/consultations/bookings/cancel', { bookingId: done._id });
    const repository = new BookingRepository(models());
    expect(await repository.flagOwed(2)).toBe(2);
    expect(await repository.flagOwed(2)).toBe(1);
    expect(await repository.flagOwed(2)).toBe(0);
    for (const { booking } of owing) expect(await bookings().findOne({ _id: booking._id } as never)).toMatchObject({ owed: true });
    expect(await bookings().findOne({ _id: done._id } as never)).not.toHaveProperty('owed');
  });
});
