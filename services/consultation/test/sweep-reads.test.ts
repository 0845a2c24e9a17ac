import mongoose from 'mongoose';
import { startWireCounter, testServers, type WireCounter } from '@mkt/infra';
import { stopRuntime } from '@mkt/kit/runtime';
import { BookingRepository } from '../src/db/booking.repository';
import { as, bookingBody, givenOffer, newUser, startConsultation } from './harness';

/**
 * What the booking sweep reads, seen on the wire: of the given-up bookings only those still
 * owing a give-back, through the sparse index that holds nothing else — so a booking whose
 * give-back is done is never read again, however many there are; of the PaymentPending ones,
 * their turn through the partial index keyed in its order — so the server never sorts every
 * booking waiting for the wallet. (Free bookings only: the wallet is never asked.)
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

/** The sweep's PaymentPending reads of `bookings` (filter, sort, hint, limit), as sent. */
function waitingReads(): Array<{ filter: Record<string, unknown>; sort: Record<string, unknown>; hint?: unknown; limit?: unknown }> {
  return counter
    .commands()
    .filter((command) => command.name === 'find')
    .map((command) => mongoose.mongo.BSON.deserialize(command.body))
    .filter((body) => body.find === 'bookings' && (body.filter as Record<string, unknown>).status === 'PaymentPending')
    .map((body) => ({
      filter: body.filter as Record<string, unknown>,
      sort: body.sort as Record<string, unknown>,
      hint: body.hint as unknown,
      limit: body.limit as unknown,
    }));
}

test('the PaymentPending read walks the partial index of its turn: hinted, sorted by its keys in their order, never asked first, then least recently asked, older first', async () => {
  // The index: only PaymentPending bookings, keyed by the turn (never asked has no `paymentTriedAt`: first).
  const waitingIndex = (await bookings().indexes()).find((index) => index.name === 'payment_pending_turn');
  expect(waitingIndex).toMatchObject({ partialFilterExpression: { status: 'PaymentPending' } });
  expect(Object.entries(waitingIndex!.key)).toEqual([
    ['paymentTriedAt', 1],
    ['updatedAt', 1],
    ['_id', 1],
  ]);

  const offer = await givenOffer(() => app, { capacity: 10, basePrice: 0 });
  const res = await as(() => app, newUser())('POST', '/consultations/bookings', bookingBody(offer, { subTotal: 0, totalAmount: 0 }));
  expect(res.body.data.status).toBe('Confirmed');
  const { _id, referenceId, ...rest } = (await app.parts.models.Booking.findById(res.body.data.bookingId).lean())!;
  const now = Date.now();
  const copy = (suffix: string, set: object) => ({ ...rest, _id: `${_id}-${suffix}`, referenceId: `${referenceId}-${suffix}`, ...set });
  const waiting = (suffix: string, updatedAgo: number, triedAgo?: number) =>
    copy(suffix, {
      status: 'PaymentPending',
      updatedAt: new Date(now - updatedAgo),
      ...(triedAgo === undefined ? {} : { paymentTriedAt: new Date(now - triedAgo) }),
    });
  // This file's database: only these wait for the wallet (stored out of their turn's order).
  await bookings().deleteMany({ status: 'PaymentPending' } as never);
  await bookings().insertMany([
    waiting('asked-late', 300_000, 10_000),
    waiting('new-newer-b', 60_000),
    waiting('asked-early', 100_000, 20_000),
    waiting('recent', 1_000), // touched after the read's bound: not read
    waiting('new-older', 200_000),
    waiting('new-newer-a', 60_000),
    copy('confirmed', { status: 'Confirmed', updatedAt: new Date(now - 400_000) }),
  ] as never[]);
  const repository = new BookingRepository(app.parts.models);
  const mine = (found: Array<{ _id: string }>) =>
    found
      .map((each) => each._id)
      .filter((id) => id.startsWith(`${_id}-`))
      .map((id) => id.slice(_id.length + 1));
  const waitingBefore = new Date(now - 30_000);

  counter.reset();
  // Never asked first, older moves first (`_id` between equals); then those read are stamped.
  expect(mine(await repository.unfinished(new Date(0), waitingBefore, 3, new Date(now)))).toEqual([
    'new-older',
    'new-newer-a',
    'new-newer-b',
  ]);
  // Then the least recently asked: the two asked before, then the three just stamped, older first.
  expect(mine(await repository.unfinished(new Date(0), waitingBefore, 10, new Date(now + 1)))).toEqual([
    'asked-early',
    'asked-late',
    'new-older',
    'new-newer-a',
    'new-newer-b',
  ]);

  // On the wire: each read names the index, and its sort is the index's keys in their order.
  const reads = waitingReads();
  expect(reads.map(({ filter, hint, limit }) => ({ filter, hint, limit }))).toEqual([
    { filter: { status: 'PaymentPending', updatedAt: { $lt: waitingBefore } }, hint: 'payment_pending_turn', limit: 3 },
    { filter: { status: 'PaymentPending', updatedAt: { $lt: waitingBefore } }, hint: 'payment_pending_turn', limit: 10 },
  ]);
  for (const { sort } of reads) expect(Object.entries(sort)).toEqual(Object.entries(waitingIndex!.key));
});
