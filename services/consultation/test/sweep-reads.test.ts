import mongoose from 'mongoose';
import { startWireCounter, testServers, type WireCounter } from '@mkt/infra';
import { stopRuntime } from '@mkt/kit/runtime';
import { as, bookingBody, givenOffer, newUser, startConsultation } from './harness';

/**
 * What the booking sweep reads of the given-up bookings, seen on the wire: only those still
 * owing a give-back, through the sparse index that holds nothing else — so a booking whose
 * give-back is done is never read again, however many there are. (Free bookings only: the
 * wallet is never asked.)
 */
let counter: WireCounter;
let app: Awaited<ReturnType<typeof startConsultation>>;

beforeAll(async () => {
  counter = await startWireCounter(testServers().mongoUrl, { record: true });
  app = await startConsultation('http://127.0.0.1:9', testServers().amqpUrl, { MONGO_URL: counter.url });
});
afterAll(async () => {
  await stopRuntime(app.started);
  await mongoose.disconnect();
  await counter.stop();
});

const bookings = () => app.parts.models.Booking.collection;

/** The sweep's reads of `bookings` (filter and hint), as sent. */
function bookingReads(): Array<{ filter: Record<string, unknown>; hint?: unknown }> {
  return counter
    .commands()
    .filter((command) => command.name === 'find')
    .map((command) => mongoose.mongo.BSON.deserialize(command.body))
    .filter((body) => body.find === 'bookings')
    .map((body) => ({ filter: body.filter as Record<string, unknown>, hint: body.hint as unknown }));
}

test('given-up bookings whose give-back is done are not read by the sweep: its give-back read examines the owed ones only', async () => {
  const offer = await givenOffer(() => app, { capacity: 10, basePrice: 0 });
  const book = async () => {
    const buyer = newUser();
    const res = await as(() => app, buyer)('POST', '/consultations/bookings', bookingBody(offer, { subTotal: 0, totalAmount: 0 }));
    expect(res.body.data.status).toBe('Confirmed');
    return { buyer, id: res.body.data.bookingId as string };
  };
  // Three cancelled by their buyers and given back whole (the history), one whose give-back a crash interrupted.
  const done = [await book(), await book(), await book()];
  for (const { buyer, id } of done) {
    const res = await as(() => app, buyer)('POST', '/consultations/bookings/cancel', { bookingId: id, reason: 'changed plans' });
    expect(res.body.data.status).toBe('Cancelled');
  }
  const interrupted = await book();
  await bookings().updateOne({ _id: interrupted.id } as never, { $set: { status: 'Cancelled', compensated: [], owed: true } });

  for (const { id } of done) {
    const doc = await bookings().findOne({ _id: id } as never);
    expect(doc).toMatchObject({ status: 'Cancelled', compensated: ['confirm', 'day', 'slot'] });
    expect(doc).not.toHaveProperty('owed');
  }
  // The index the give-back read names holds the documents carrying `owed`: the one owed, not the history.
  const owedIndex = (await bookings().indexes()).find((index) => index.name === 'owed_1');
  expect(owedIndex).toMatchObject({ key: { owed: 1 }, sparse: true });
  expect(await bookings().countDocuments({ owed: { $exists: true } })).toBe(1);
  expect(await bookings().countDocuments({ status: 'Cancelled' })).toBe(4);

  const now = Date.now();
  counter.reset();
  await app.parts.bookings.sweep(new Date(now));
  const giveBackReads = bookingReads().filter(({ filter }) => !['Pending', 'PaymentPending'].includes(filter.status as string));
  // The give-back read, through the sparse index; and, at the sweep's first run, its look for
  // given-up bookings owing a give-back without the flag (rare: every OWED_CHECK_MINUTES).
  const look = {
    filter: { status: { $in: ['Failed', 'Cancelled'] }, compensated: { $ne: 'slot' }, owed: { $exists: false } },
    hint: undefined,
  };
  expect(giveBackReads).toEqual([look, { filter: { owed: true, compensated: { $ne: 'slot' } }, hint: 'owed_1' }]);
  // The interrupted one was finished, and its flag went with its last give-back: the index is empty.
  expect(await bookings().findOne({ _id: interrupted.id } as never)).toMatchObject({ compensated: ['confirm', 'day', 'slot'] });
  expect(await bookings().countDocuments({ owed: { $exists: true } })).toBe(0);

  // The next sweeps, before the look is due again: the give-back read alone.
  counter.reset();
  await app.parts.bookings.sweep(new Date(now + 10_000));
  expect(bookingReads().filter(({ filter }) => !['Pending', 'PaymentPending'].includes(filter.status as string))).toEqual([
    { filter: { owed: true, compensated: { $ne: 'slot' } }, hint: 'owed_1' },
  ]);
});
