import { Migrator } from '@mkt/kit/db';
import { consultationMigrations } from '../src/migrations';
import { as, bookingBody, daysAhead, givenOffer, log, models, newUser, useConsultationApp, type Offer } from './harness';

const app = useConsultationApp();

/**
 * The migrator of the running service's database (as its `dist/migrate.js` builds it), knowing
 * the first `count` migrations (a test of one migration reverts that one, not a later one).
 */
const migrator = (count = consultationMigrations.length) =>
  new Migrator({
    context: { db: models().Consultation.db, log, models: [], outboxSources: [] },
    migrations: consultationMigrations.slice(0, count),
  });

/** The consultation as a release before `sellerRef` stored it: no seller reference at all. */
async function asOldShape(offer: Offer): Promise<void> {
  await models().Consultation.collection.updateOne({ _id: offer.consultationId } as never, { $unset: { sellerRef: '' } });
}

const bookBySellerRef = (offer: Offer, date: string) =>
  as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer, { SellerId: offer.seller.ref, date }));

describe('0002-seller-refs: consultations made before sellerRef get their seller’s reference', () => {
  test('backfilled from what the database holds; SellerId by reference then books them; down undoes only the backfill', async () => {
    // A seller with an older consultation and a newer one (which has the reference).
    const twice = await givenOffer(app, { capacity: 5 });
    const newer = await as(app, twice.seller)('POST', '/consultations', {
      title: 'Interview practice',
      description: 'One hour',
      duration: 60,
      sessionType: 'Group',
      maxCapacity: 5,
      deliveryMode: 'Online',
      timezone: 'Africa/Addis_Ababa',
      language: 'Amharic',
      category: 'Career',
      subcategory: ['CV'],
      tags: ['coaching'],
      ruleSetId: twice.ruleSetId,
      pricingId: twice.pricingId,
    });
    expect(newer.status).toBe(200);
    // A seller whose only consultation is old, who once booked as a buyer (the booking names them).
    const bought = await givenOffer(app, { capacity: 5 });
    const elsewhere = await givenOffer(app, { capacity: 5 });
    const booked = await as(app, newUser())('POST', '/consultations/bookings', bookingBody(elsewhere));
    expect(booked.status).toBe(200);
    const booking = await models().Booking.collection.findOne({ _id: booked.body.data.bookingId } as never);
    await models().Booking.collection.insertOne({
      ...booking,
      _id: `${booking!._id}-2`,
      referenceId: `${booking!.referenceId}-2`,
      buyerId: bought.seller.id,
      buyerRef: bought.seller.ref,
    } as never);
    // A seller of whom the database holds no reference anywhere.
    const stranger = await givenOffer(app, { capacity: 5 });
    for (const offer of [twice, bought, stranger]) await asOldShape(offer);

    // Before: the reference names nobody on an old consultation (422, nothing booked).
    const refused = await bookBySellerRef(twice, daysAhead(8));
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0].path).toBe('SellerId');

    // The migration again, as a database of the old release has it ahead of it.
    await models()
      .Consultation.db.collection('migrations')
      .deleteOne({ _id: '0002-seller-refs' } as never);
    expect(await migrator(2).up()).toEqual(['0002-seller-refs']);

    const refOf = async (offer: Offer) => (await models().Consultation.findById(offer.consultationId).lean())?.sellerRef ?? null;
    expect(await refOf(twice)).toBe(twice.seller.ref);
    expect(await refOf(bought)).toBe(bought.seller.ref);
    expect(await refOf(stranger)).toBeNull();
    for (const offer of [twice, bought]) {
      const res = await bookBySellerRef(offer, daysAhead(8));
      expect(res.status).toBe(200);
      expect(res.body.data.status).toBe('Confirmed');
    }
    // The seller's id names them on every consultation, backfilled or not.
    const byId = await as(app, newUser())('POST', '/consultations/bookings', bookingBody(stranger, { date: daysAhead(8) }));
    expect(byId.status).toBe(200);

    // Run again: nothing changes twice.
    await models()
      .Consultation.db.collection('migrations')
      .deleteOne({ _id: '0002-seller-refs' } as never);
    await migrator(2).up();
    expect(await refOf(twice)).toBe(twice.seller.ref);

    // down: only what the backfill set goes (the newer consultation keeps the reference it was made with).
    expect(await migrator(2).down()).toEqual(['0002-seller-refs']);
    expect(await refOf(twice)).toBeNull();
    expect(await refOf(bought)).toBeNull();
    expect((await models().Consultation.findById(newer.body.data.id).lean())?.sellerRef).toBe(twice.seller.ref);
    expect(await migrator(2).pending()).toEqual(['0002-seller-refs']);
    await migrator(2).up();
  });
});

describe('0003-booking-steps: bookings of the previous release (a `released` flag) finish on the booking flow', () => {
  /** What a booking still holds of its slot: the places the counter keeps for it. */
  const slotHeldBy = async (booking: { _id: string; slotKey: string }) =>
    (await models().SlotPlace.findById(booking.slotKey).lean())!.bookingIds.filter((id) => id === booking._id).length;

  test('released → every give-back recorded; not released → the sweep gives it back once; down restores the flag', async () => {
    const offer = await givenOffer(app, { capacity: 5, basePrice: 0 });
    const make = async (date: string) => {
      const res = await as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer, { date, subTotal: 0, totalAmount: 0 }));
      expect(res.body.data.status).toBe('Confirmed');
      return (await models().Booking.findById(res.body.data.bookingId).lean())!;
    };
    const [kept, interrupted, finished] = [await make(daysAhead(9)), await make(daysAhead(10)), await make(daysAhead(11))];
    // As the previous release left them: a cancel whose release a crash interrupted (its places
    // still held), a cancel released, a Confirmed booking — each with `released`, none with `compensated`.
    const oldShape = (id: string, set: object) =>
      models().Booking.collection.updateOne({ _id: id } as never, { $set: set, $unset: { compensated: '' } });
    await oldShape(kept._id, { released: false });
    await oldShape(interrupted._id, { status: 'Cancelled', released: false });
    // (`finished`: its slot place given back as the previous release's release did.)
    await oldShape(finished._id, { status: 'Cancelled', released: true });
    await models().SlotPlace.updateOne({ _id: finished.slotKey }, { $pull: { bookingIds: finished._id }, $inc: { booked: -1 } });

    // The migrations again, as a database of the old release has them ahead of it.
    await models()
      .Consultation.db.collection('migrations')
      .deleteMany({ _id: { $in: ['0003-booking-steps', '0004-owed-give-backs'] } } as never);
    expect(await migrator().up()).toEqual(['0003-booking-steps', '0004-owed-give-backs']);
    const raw = (id: string) => models().Booking.collection.findOne({ _id: id } as never);
    expect(await raw(kept._id)).toMatchObject({ compensated: [] });
    expect(await raw(interrupted._id)).toMatchObject({ compensated: [] });
    expect(await raw(finished._id)).toMatchObject({ compensated: ['confirm', 'coupon', 'day', 'slot'] });
    for (const id of [kept._id, interrupted._id, finished._id]) expect(await raw(id)).not.toHaveProperty('released');

    // The sweep finishes the interrupted one on the flow, once; the others have nothing to do.
    expect(await slotHeldBy(interrupted)).toBe(1);
    await app().parts.bookings.sweep();
    await app().parts.bookings.sweep();
    expect(await slotHeldBy(interrupted)).toBe(0);
    expect((await models().SlotPlace.findById(interrupted.slotKey).lean())!.booked).toBe(0);
    expect(await raw(interrupted._id)).toMatchObject({ compensated: ['confirm', 'day', 'slot'] });
    expect(await slotHeldBy(kept)).toBe(1);
    expect((await models().SlotPlace.findById(finished.slotKey).lean())!.booked).toBe(0);

    // Run again: nothing changes twice. Down: the flag again, from the record.
    await models()
      .Consultation.db.collection('migrations')
      .deleteOne({ _id: '0003-booking-steps' } as never);
    await migrator().up();
    expect(await raw(interrupted._id)).toMatchObject({ compensated: ['confirm', 'day', 'slot'] });
    expect(await migrator(4).down({ steps: 2 })).toEqual(['0004-owed-give-backs', '0003-booking-steps']);
    expect(await raw(kept._id)).toMatchObject({ released: false });
    expect(await raw(interrupted._id)).toMatchObject({ released: true });
    expect(await raw(kept._id)).not.toHaveProperty('compensated');
    await migrator().up();
    expect(await raw(kept._id)).toMatchObject({ compensated: [] });
  });
});

describe('0004-owed-give-backs: given-up bookings still owing a give-back are found by the sweep through `owed`', () => {
  test('a booking an older replica gave up (no flag) is flagged and given back once; one given back whole is not; down drops the flag and the index', async () => {
    const offer = await givenOffer(app, { capacity: 5, basePrice: 0 });
    const make = async (date: string) => {
      const res = await as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer, { date, subTotal: 0, totalAmount: 0 }));
      expect(res.body.data.status).toBe('Confirmed');
      return (await models().Booking.findById(res.body.data.bookingId).lean())!;
    };
    const [confirmed, interrupted, finished] = [await make(daysAhead(12)), await make(daysAhead(13)), await make(daysAhead(14))];
    // As a replica of the previous release leaves them: a cancel whose give-back it did not finish
    // (its places still held), a cancel given back whole; neither carries `owed`.
    await models().Booking.collection.updateOne({ _id: interrupted._id } as never, { $set: { status: 'Cancelled', compensated: [] } });
    await models().Booking.collection.updateOne({ _id: finished._id } as never, {
      $set: { status: 'Cancelled', compensated: ['confirm', 'day', 'slot'] },
    });
    await models().SlotPlace.updateOne({ _id: finished.slotKey }, { $pull: { bookingIds: finished._id }, $inc: { booked: -1 } });
    const raw = (id: string) => models().Booking.collection.findOne({ _id: id } as never);
    const slotHeldBy = async (booking: { _id: string; slotKey: string }) =>
      (await models().SlotPlace.findById(booking.slotKey).lean())!.bookingIds.includes(booking._id);

    // Before the migration the sweep does not see it: nothing flags it.
    await app().parts.bookings.sweep();
    expect(await slotHeldBy(interrupted)).toBe(true);

    await models()
      .Consultation.db.collection('migrations')
      .deleteOne({ _id: '0004-owed-give-backs' } as never);
    expect(await migrator().up()).toEqual(['0004-owed-give-backs']);
    expect(await raw(interrupted._id)).toMatchObject({ owed: true });
    for (const id of [confirmed._id, finished._id]) expect(await raw(id)).not.toHaveProperty('owed');
    const owedIndex = (await models().Booking.collection.indexes()).find((index) => index.name === 'owed_1');
    expect(owedIndex).toMatchObject({ key: { owed: 1 }, sparse: true });

    await app().parts.bookings.sweep();
    await app().parts.bookings.sweep();
    expect(await slotHeldBy(interrupted)).toBe(false);
    expect((await models().SlotPlace.findById(interrupted.slotKey).lean())!.booked).toBe(0);
    expect(await raw(interrupted._id)).toMatchObject({ compensated: ['confirm', 'day', 'slot'] });
    expect(await raw(interrupted._id)).not.toHaveProperty('owed');
    expect(await slotHeldBy(confirmed)).toBe(true);

    // Run again: nothing changes twice. Down: no flag, no index; up again builds them.
    await models()
      .Consultation.db.collection('migrations')
      .deleteOne({ _id: '0004-owed-give-backs' } as never);
    await migrator().up();
    expect(await raw(interrupted._id)).not.toHaveProperty('owed');
    await models().Booking.collection.updateOne({ _id: confirmed._id } as never, { $set: { status: 'Failed', owed: true } });
    expect(await migrator(4).down()).toEqual(['0004-owed-give-backs']);
    expect(await raw(confirmed._id)).not.toHaveProperty('owed');
    expect((await models().Booking.collection.indexes()).map((index) => index.name)).not.toContain('owed_1');
    await migrator().up();
    expect(await raw(confirmed._id)).toMatchObject({ owed: true });
  });
});

describe('0005-waiting-turn-index: the sweep reads PaymentPending bookings through the partial index of their turn', () => {
  const waitingIndex = async () => (await models().Booking.collection.indexes()).find((index) => index.name === 'payment_pending_turn');
  /** The index as the model declares it (what `0001-indexes` builds on a database made by this release). */
  const declared = () => {
    const found = models()
      .Booking.schema.indexes()
      .find(([, options]) => options.name === 'payment_pending_turn');
    expect(found).toBeDefined();
    const [key, { partialFilterExpression }] = found!;
    return { key, partialFilterExpression };
  };

  test('a database whose indexes were built before it gets the index, the one the model declares; down drops it, up builds it again', async () => {
    expect(declared()).toEqual({
      key: { paymentTriedAt: 1, updatedAt: 1, _id: 1 },
      partialFilterExpression: { status: 'PaymentPending' },
    });
    expect(await waitingIndex()).toMatchObject(declared());

    // As a database of the previous release has it: `0001-indexes` ran before the model declared it.
    await models().Booking.collection.dropIndex('payment_pending_turn');
    await models()
      .Consultation.db.collection('migrations')
      .deleteOne({ _id: '0005-waiting-turn-index' } as never);
    expect(await waitingIndex()).toBeUndefined();
    expect(await migrator().up()).toEqual(['0005-waiting-turn-index']);
    expect(await waitingIndex()).toMatchObject(declared());

    // Run again (the index exists): nothing changes. Down: no index; up builds it again.
    await models()
      .Consultation.db.collection('migrations')
      .deleteOne({ _id: '0005-waiting-turn-index' } as never);
    expect(await migrator().up()).toEqual(['0005-waiting-turn-index']);
    expect((await models().Booking.collection.indexes()).filter((index) => index.name === 'payment_pending_turn')).toHaveLength(1);
    expect(await migrator(5).down()).toEqual(['0005-waiting-turn-index']);
    expect(await waitingIndex()).toBeUndefined();
    expect(await migrator().up()).toEqual(['0005-waiting-turn-index']);
    expect(await waitingIndex()).toMatchObject(declared());
  });
});

describe('0006-listing-sweep-indexes: the listings and the session sweep read through indexes in their order', () => {
  const BUILT = {
    bookings: [
      'buyerId_1_startsAt_-1__id_-1',
      'sellerId_1_startsAt_-1__id_-1',
      'status_1_startsAt_-1__id_-1',
      'sessionId_1_status_1',
      'couponId_1_status_1',
    ],
    sessions: [
      'status_1_endsAt_1',
      'expired_by_finished',
      'sellerId_1_startsAt_-1__id_-1',
      'buyerIds_1_startsAt_-1__id_-1',
      'status_1_startsAt_-1__id_-1',
      'startsAt_-1__id_-1',
    ],
  } as const;
  const REPLACED = { bookings: ['buyerId_1', 'sellerId_1', 'status_1'], sessions: ['sellerId_1'] } as const;
  type Collection = keyof typeof BUILT;
  const collections: Collection[] = ['bookings', 'sessions'];
  const modelOf = (collection: Collection) => (collection === 'bookings' ? models().Booking : models().Session);
  /** The collection's indexes as the database has them: name → keys in their order and partial filter. */
  const indexesOf = async (collection: Collection) =>
    new Map(
      (await modelOf(collection).collection.indexes()).map((index) => [
        index.name!,
        { key: Object.entries(index.key), partialFilterExpression: index.partialFilterExpression },
      ]),
    );
  /** The model's declaration of each index it builds, by the name the database gives it. */
  const declared = async (collection: Collection) => {
    const found = await indexesOf(collection);
    const byKey = new Map([...found].map(([name, { key }]) => [JSON.stringify(key), name]));
    return new Map(
      modelOf(collection)
        .schema.indexes()
        .map(([key, options]) => [
          (options.name as string | undefined) ?? byKey.get(JSON.stringify(Object.entries(key))),
          { key: Object.entries(key), partialFilterExpression: options.partialFilterExpression as unknown },
        ]),
    );
  };
  const names = async (collection: Collection) => [...(await indexesOf(collection)).keys()];
  /** Each index the migration builds is there as the model declares it; the ones it replaces are gone. */
  const expectBuilt = async () => {
    for (const collection of collections) {
      const [found, model] = [await indexesOf(collection), await declared(collection)];
      for (const name of BUILT[collection]) {
        expect(model.get(name)).toBeDefined();
        expect(found.get(name)).toEqual(model.get(name));
      }
      expect(await names(collection)).toEqual(expect.not.arrayContaining([...REPLACED[collection]]));
    }
  };
  const forget = () =>
    models()
      .Consultation.db.collection('migrations')
      .deleteOne({ _id: '0006-listing-sweep-indexes' } as never);

  test('a database of the previous release gets the indexes the models declare and loses the single-field ones they start with; again changes nothing; down gives them back, up again', async () => {
    expect((await declared('sessions')).get('expired_by_finished')).toEqual({
      key: [['expiryFinished', 1]],
      partialFilterExpression: { status: 'Expired' },
    });
    await expectBuilt();

    // As a database of the previous release has it: its single-field indexes, none of these.
    for (const collection of collections) {
      for (const name of REPLACED[collection]) await modelOf(collection).collection.createIndex({ [name.slice(0, -2)]: 1 });
      for (const name of BUILT[collection]) await modelOf(collection).collection.dropIndex(name);
    }
    await forget();
    expect(await names('bookings')).toEqual(expect.arrayContaining([...REPLACED.bookings]));
    expect(await migrator(6).up()).toEqual(['0006-listing-sweep-indexes']);
    await expectBuilt();

    // Run again (all built, none to drop): nothing changes.
    const before = { bookings: await indexesOf('bookings'), sessions: await indexesOf('sessions') };
    await forget();
    expect(await migrator(6).up()).toEqual(['0006-listing-sweep-indexes']);
    for (const collection of collections) expect(await indexesOf(collection)).toEqual(before[collection]);

    // Down: the single-field indexes back, none of these; up builds them again.
    expect(await migrator(6).down()).toEqual(['0006-listing-sweep-indexes']);
    for (const collection of collections) {
      const found = await indexesOf(collection);
      for (const name of REPLACED[collection])
        expect(found.get(name)).toEqual({ key: [[name.slice(0, -2), 1]], partialFilterExpression: undefined });
      expect([...found.keys()]).toEqual(expect.not.arrayContaining([...BUILT[collection]]));
    }
    expect(await migrator(6).up()).toEqual(['0006-listing-sweep-indexes']);
    await expectBuilt();
  });
});

describe('0007-disputed-queue-index: an admin’s disputed queue reads the disputed bookings only', () => {
  const NAME = 'disputed_by_startsAt';
  const bookings = () => models().Booking.collection;
  const found = async () => (await bookings().indexes()).find((index) => index.name === NAME);
  const forget = () =>
    models()
      .Consultation.db.collection('migrations')
      .deleteOne({ _id: '0007-disputed-queue-index' } as never);

  test('a database of the previous release gets the index as the model declares it; again changes nothing; down drops it, up builds it again', async () => {
    const [declaredKey, declaredOptions] = models()
      .Booking.schema.indexes()
      .find(([, options]) => options.name === NAME)!;
    const declared = { key: Object.entries(declaredKey), partialFilterExpression: declaredOptions.partialFilterExpression as unknown };
    const asBuilt = async () => {
      const index = await found();
      return index && { key: Object.entries(index.key), partialFilterExpression: index.partialFilterExpression };
    };
    expect(declared).toEqual({
      key: [
        ['startsAt', -1],
        ['_id', -1],
        ['status', 1],
      ],
      partialFilterExpression: { dispute: { $type: 'object' } },
    });
    expect(await asBuilt()).toEqual(declared);

    // As a database of the previous release has it: no such index.
    await bookings().dropIndex(NAME);
    await forget();
    expect(await migrator().up()).toEqual(['0007-disputed-queue-index']);
    expect(await asBuilt()).toEqual(declared);

    await forget();
    expect(await migrator().up()).toEqual(['0007-disputed-queue-index']);
    expect(await asBuilt()).toEqual(declared);

    expect(await migrator().down()).toEqual(['0007-disputed-queue-index']);
    expect(await found()).toBeUndefined();
    expect(await migrator().up()).toEqual(['0007-disputed-queue-index']);
    expect(await asBuilt()).toEqual(declared);
  });
});
