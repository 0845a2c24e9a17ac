import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import mongoose from 'mongoose';
import { call, startWireCounter, testServers, waitFor, type WireCounter } from '@mkt/infra';
import { stopRuntime } from '@mkt/kit/runtime';
import { admin, bookingBody, ensureWallet, givenOffer, newUser, startConsultation, tokenOf } from './harness';

/**
 * The database commands one booking costs, counted on the wire between the service and the
 * database (README, "Database round trips"). The wallet is a stand-in answering every hold with
 * Held: the real one would share this process's connection, and its commands are its own business.
 */
let counter: WireCounter;
let app: Awaited<ReturnType<typeof startConsultation>>;
let wallet: Server;
let direct: mongoose.mongo.MongoClient;

beforeAll(async () => {
  counter = await startWireCounter(testServers().mongoUrl);
  wallet = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ success: true, data: { status: 'Held', settlement: null } }));
    });
  });
  await new Promise<void>((resolve) => wallet.listen(0, '127.0.0.1', resolve));
  const walletUrl = `http://127.0.0.1:${(wallet.address() as AddressInfo).port}`;
  app = await startConsultation(walletUrl, testServers().amqpUrl, { MONGO_URL: counter.url });
  // The relay's sweep reads on a timer of its own; flushes after a write still run.
  await app.started.runtime.outbox.stop();
  direct = await mongoose.mongo.MongoClient.connect(testServers().mongoUrl);
});
afterAll(async () => {
  await stopRuntime(app.started);
  await new Promise((resolve) => wallet.close(resolve));
  await direct.close();
  await mongoose.disconnect();
  await counter.stop();
});

const appOf = () => app;

/** Waits (reading around the counter) until the booking's events have left its outbox. */
async function outboxDrained(bookingId: string): Promise<void> {
  const bookings = direct.db(app.started.runtime.db.db!.databaseName).collection<{ _id: string; pendingEvents: unknown[] }>('bookings');
  await waitFor(async () => (await bookings.findOne({ _id: bookingId }))?.pendingEvents.length === 0, {
    what: `the events of ${bookingId} to leave its outbox`,
    intervalMs: 20,
  });
}

/**
 * Waits until no document of the service's database has an event left in its outbox: the writes
 * before a booking (its offer's, its buyer's) are flushed by the relay after they answer, and under
 * load such a flush can land after the counter is reset.
 */
async function everyOutboxDrained(): Promise<void> {
  const db = direct.db(app.started.runtime.db.db!.databaseName);
  const names = (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
  await waitFor(
    async () => {
      for (const name of names) if (await db.collection(name).findOne({ 'pendingEvents.0': { $exists: true } })) return false;
      return true;
    },
    { what: 'every outbox to be empty before counting', intervalMs: 20 },
  );
}

async function book(offer: Awaited<ReturnType<typeof givenOffer>>, overrides: object = {}) {
  const buyer = newUser();
  await ensureWallet(buyer);
  await everyOutboxDrained();
  counter.reset();
  return call(app.url, 'POST', '/consultations/bookings', { token: tokenOf(buyer), body: bookingBody(offer, overrides) });
}

describe('database commands per booking', () => {
  test('a free booking confirmed: 1 read (consultation, rule set and pricing joined), the insert, 4 guarded writes (slot, day, session, booking), the outbox pull', async () => {
    await ensureWallet(admin);
    const offer = await givenOffer(appOf, { basePrice: 0 });
    const res = await book(offer, { subTotal: 0, totalAmount: 0 });
    expect(res.body.data.status).toBe('Confirmed');
    await outboxDrained(res.body.data.bookingId);
    expect(counter.counts()).toEqual({ aggregate: 1, insert: 1, findAndModify: 4, update: 1 });
  });

  test('a paid booking confirmed: as a free one, plus the write to PaymentPending before the wallet is asked (not read back)', async () => {
    const offer = await givenOffer(appOf);
    const res = await book(offer);
    expect(res.body.data.status).toBe('Confirmed');
    await outboxDrained(res.body.data.bookingId);
    expect(counter.counts()).toEqual({ aggregate: 1, insert: 1, findAndModify: 4, update: 2 });
  });

  test('a booking refused (slot taken): 1 read, the insert, the slot tried (first: nothing to give back), the booking deleted', async () => {
    const offer = await givenOffer(appOf, { basePrice: 0 });
    const first = await book(offer, { subTotal: 0, totalAmount: 0 });
    expect(first.body.data.status).toBe('Confirmed');
    // The first booking's outbox pull (an update) must not land in the second one's count.
    await outboxDrained(first.body.data.bookingId);
    const res = await book(offer, { subTotal: 0, totalAmount: 0 });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].code).toBe('slot_unavailable');
    expect(counter.counts()).toEqual({ aggregate: 1, insert: 1, findAndModify: 1, delete: 1 });
  });
});
