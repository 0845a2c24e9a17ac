import mongoose from 'mongoose';
import { startComponent, stopRuntime, type StartedRuntime } from '@mkt/kit/runtime';
import { startWireCounter, testIdentity, testServers, type WireCounter } from '@mkt/infra';
import { crmService } from '../src/composition';
import { loadConfig } from '../src/config';
import { onBookingCancelled, onBookingConfirmed } from '../src/domain/projection';
import { cancelled, confirmed, env, log, newUser } from './harness';

/**
 * The database commands one booking event costs the CRM, counted on the wire between the
 * service and the database (README, "Database round trips").
 */
let counter: WireCounter;
let started: StartedRuntime;
let crm: ReturnType<typeof crmService>;

beforeAll(async () => {
  counter = await startWireCounter(testServers().mongoUrl);
  crm = crmService(loadConfig({ ...env.serviceEnv(testIdentity().keys.publicKey), MONGO_URL: counter.url }), log);
  started = await startComponent(crm.definition, env.dbName);
});
afterAll(async () => {
  await stopRuntime(started);
  await mongoose.disconnect();
  await counter.stop();
});

describe('database commands per booking event', () => {
  test('a booking confirmed: the fact merged, the pair’s facts read, the relationship upserted, the facts read again', async () => {
    const seller = newUser('seller');
    const buyer = newUser('buyer');
    counter.reset();
    await crm.parts.projection.apply(onBookingConfirmed(confirmed(seller.id, buyer.id, 10_000)));
    expect(counter.counts()).toEqual({ update: 2, find: 2 });
    const relationship = await crm.parts.models.relationships.findOne({ sellerId: seller.id, buyerId: buyer.id }).lean();
    expect(relationship).toMatchObject({ totalBookings: 1, totalSpentMinor: 10_000 });
  });

  test('a booking cancelled with a refund: the same four commands', async () => {
    const seller = newUser('seller');
    const buyer = newUser('buyer');
    const booking = confirmed(seller.id, buyer.id, 10_000);
    await crm.parts.projection.apply(onBookingConfirmed(booking));
    counter.reset();
    await crm.parts.projection.apply(onBookingCancelled(cancelled(seller.id, buyer.id, booking.data.bookingId, 4_000)));
    expect(counter.counts()).toEqual({ update: 2, find: 2 });
    const relationship = await crm.parts.models.relationships.findOne({ sellerId: seller.id, buyerId: buyer.id }).lean();
    expect(relationship).toMatchObject({ totalBookings: 0, totalSpentMinor: 6_000 });
  });
});
