import mongoose from 'mongoose';
import { startWireCounter, testServers, type WireCounter } from '@mkt/infra';
import { stopRuntime } from '@mkt/kit/runtime';
import {
  admin,
  approveAsRead,
  as,
  bookingBody,
  daysAhead,
  newUser,
  startConsultation,
  useConsultationApp,
  weekdays,
  ZONE,
  type ConsultationApp,
  type Offer,
} from './harness';

// The rule-set listing's cost is bounded by the distinct shapes of what a seller offers, not by
// how many consultations carry them; and a seller's consultations are capped.

const app = useConsultationApp();

const RULE_SETS = '/consultations/availability-rule-sets/rule-sets';

/** A seller's rule set open every day 09:00–17:00 and a price, on `target`. */
async function givenSetup(target: () => { url: string }, seller = newUser('seller')) {
  const call = as(target, seller);
  const ruleSet = await call('POST', RULE_SETS, {
    name: 'Every day',
    timezone: ZONE,
    metaData: { autoAccept: true, bufferTime: 0, maxBookingsPerDay: 50 },
    availabilityRules: weekdays.map((weekday) => ({
      type: 'weekly',
      weekday,
      intervals: [{ start_time: '09:00:00', end_time: '17:00:00', enabled: true }],
    })),
  });
  const pricing = await call('POST', '/consultations/pricing', { basePrice: 500, currency: 'ETB', pricingStrategy: 'Fixed' });
  const create = (duration: number, maxCapacity: number) =>
    call('POST', '/consultations', {
      title: `Session of ${duration}`,
      duration,
      sessionType: maxCapacity === 1 ? 'OneToOne' : 'Group',
      maxCapacity,
      deliveryMode: 'Online',
      timezone: ZONE,
      language: 'Amharic',
      category: 'Career',
      ruleSetId: ruleSet.body.data.id,
      pricingId: pricing.body.data.id,
    });
  return { seller, ruleSetId: ruleSet.body.data.id as string, pricingId: pricing.body.data.id as string, create };
}

describe('the rule-set listing counts slots once per shape', () => {
  test('40 consultations of two durations: two shapes counted, the utilization of all 40', async () => {
    const setup = await givenSetup(app);
    const created = await Promise.all([
      ...Array.from({ length: 30 }, () => setup.create(60, 1)),
      ...Array.from({ length: 10 }, () => setup.create(30, 2)),
    ]);
    expect(created.map((res) => res.status)).toEqual(created.map(() => 200));
    // One booked place, on a 60-minute consultation.
    const first = created[0]!.body.data;
    await approveAsRead(app, first.id);
    const offer: Offer = { ...setup, consultationId: first.id, referenceId: first.referenceId };
    const booked = await as(app, newUser('buyer'))('POST', '/consultations/bookings', bookingBody(offer, { date: daysAhead(3) }));
    expect(booked.body.data).toMatchObject({ status: 'Confirmed' });

    const before = app().parts.setup.usage.shapesCounted;
    const listed = await as(app, setup.seller)('GET', RULE_SETS);

    // Every day 8 one-hour slots × 30 places and 16 half-hour ones × 10 × 2 places, for 28 days.
    const offered = 28 * (8 * 30 * 1 + 16 * 10 * 2);
    expect(listed.body.data).toEqual([
      expect.objectContaining({ id: setup.ruleSetId, bookings: 1, utilization: Math.round((1 / offered) * 10_000) / 10_000 }),
    ]);
    // Slots were counted for the two durations, not for each of the 40 consultations.
    expect(app().parts.setup.usage.shapesCounted - before).toBe(2);

    // The admin's listing of every seller's rule sets gives the same figures.
    const all = await as(app, admin)('GET', `${RULE_SETS}?limit=100`);
    expect(all.body.data.find((item: { id: string }) => item.id === setup.ruleSetId)).toMatchObject({ bookings: 1 });
  });
});

describe('MAX_CONSULTATIONS_PER_SELLER', () => {
  let capped: Omit<ConsultationApp, 'wallet'>;
  const cappedApp = () => capped;
  beforeAll(async () => {
    capped = await startConsultation(app().wallet.url, undefined, { MAX_CONSULTATIONS_PER_SELLER: '3' });
  });
  afterAll(async () => {
    await stopRuntime(capped.started);
  });

  test('racing creations past the limit: exactly as many as it leaves are made, the rest are 422 limit_reached', async () => {
    const setup = await givenSetup(cappedApp);
    expect((await setup.create(60, 1)).status).toBe(200);

    const raced = await Promise.all(Array.from({ length: 6 }, () => setup.create(60, 1)));

    expect(raced.filter((res) => res.status === 200)).toHaveLength(2);
    const refused = raced.filter((res) => res.status !== 200);
    expect(refused.map((res) => [res.status, res.body.errors[0].code])).toEqual(refused.map(() => [422, 'limit_reached']));
    expect(refused[0]!.body.message).toBe('A seller may have at most 3 consultations');
    expect(await capped.parts.models.Consultation.countDocuments({ sellerId: setup.seller.id })).toBe(3);
    // Another seller has their own count.
    expect((await (await givenSetup(cappedApp)).create(60, 1)).status).toBe(200);
  });

  test('consultations made before the count was kept count too', async () => {
    const setup = await givenSetup(cappedApp);
    const made = await setup.create(30, 1);
    const { _id: _, referenceId: __, ...record } = (await capped.parts.models.Consultation.findById(made.body.data.id).lean())!;
    // Two more as an older release wrote them (no count), and the count forgotten.
    await capped.parts.models.Consultation.create([
      { ...record, _id: `${made.body.data.id}a`, referenceId: `${made.body.data.referenceId}A` },
      { ...record, _id: `${made.body.data.id}b`, referenceId: `${made.body.data.referenceId}B` },
    ]);
    await capped.parts.models.SellerQuota.deleteOne({ _id: setup.seller.id });

    const refused = await setup.create(30, 1);

    expect(refused.status).toBe(422);
    expect(refused.body.errors[0]).toMatchObject({ code: 'limit_reached' });
  });
});

describe('MAX_CONSULTATIONS_PER_SELLER, an insert whose answer is lost', () => {
  let counter: WireCounter;
  let capped: Omit<ConsultationApp, 'wallet'>;
  beforeAll(async () => {
    counter = await startWireCounter(testServers().mongoUrl, { bson: mongoose.mongo.BSON });
    // No driver retry of the insert whose answer is dropped (a replica set's would succeed past the fault).
    const url = new URL(counter.url);
    url.searchParams.set('retryWrites', 'false');
    capped = await startConsultation(app().wallet.url, undefined, { MAX_CONSULTATIONS_PER_SELLER: '3', MONGO_URL: url.toString() });
  });
  afterAll(async () => {
    await stopRuntime(capped.started);
    await counter.stop();
  });

  test('the consultation the server stored is answered as made and keeps its count: the seller reaches the limit at 3, not 4', async () => {
    const setup = await givenSetup(() => capped);
    counter.failNext({ command: 'insert', collection: 'consultations', fault: 'drop' });
    const lost = await setup.create(60, 1); // the insert applied, its answer never came
    expect(lost.status).toBe(200);
    expect(await capped.parts.models.Consultation.find({ sellerId: setup.seller.id }).distinct('_id')).toEqual([lost.body.data.id]);

    expect((await setup.create(60, 1)).status).toBe(200);
    expect((await setup.create(60, 1)).status).toBe(200);
    const refused = await setup.create(60, 1);
    expect([refused.status, refused.body.errors?.[0]?.code]).toEqual([422, 'limit_reached']);
    expect(await capped.parts.models.Consultation.countDocuments({ sellerId: setup.seller.id })).toBe(3);
  });
});
