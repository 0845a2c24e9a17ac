import { readQueue, testServers, waitFor } from '@mkt/infra';
import { cancelled, confirmed, env, event, log, newUser, registered, useCrm } from './harness';

const crm = useCrm();
const { bookings: bookingsConsumer, users: usersConsumer } = crm.parts.consumers;
const Relationship = crm.parts.models.relationships;
const rebuildAll = () => crm.parts.projection.rebuildAll();
const handle = (e: ReturnType<typeof confirmed> | ReturnType<typeof cancelled> | ReturnType<typeof registered> | { type: string }) => {
  const spec = e.type === 'identity.user.registered' ? usersConsumer : bookingsConsumer;
  const handler = (spec.handlers as Record<string, (event: unknown, ctx: { log: typeof log }) => Promise<void>>)[e.type]!;
  return handler(e, { log });
};
const totalsOf = async (sellerId: string, buyerId: string) => {
  const r = await Relationship.findOne({ sellerId, buyerId }).lean();
  return r && { totalBookings: r.totalBookings, totalSpentMinor: r.totalSpentMinor, lifetimeValueMinor: r.lifetimeValueMinor };
};

describe('booking events', () => {
  test('a confirm creates the relationship with its totals; the same event twice counts once', async () => {
    const seller = newUser('seller');
    const buyer = newUser();
    const first = confirmed(seller.id, buyer.id, 500_00);
    await handle(first);
    await handle(first);
    expect(await totalsOf(seller.id, buyer.id)).toEqual({ totalBookings: 1, totalSpentMinor: 500_00, lifetimeValueMinor: 500_00 });
    const r = await Relationship.findOne({ sellerId: seller.id, buyerId: buyer.id }).lean();
    expect(r).toMatchObject({ status: 'Active', customerType: 'New', sellerCategory: 'Career' });
    expect(r!.lastInteraction).toEqual(new Date(first.occurredAt));
  });

  test('a cancel takes the booking and the refund off, never below zero', async () => {
    const seller = newUser('seller');
    const buyer = newUser();
    const a = confirmed(seller.id, buyer.id, 500_00);
    const b = confirmed(seller.id, buyer.id, 300_00);
    await handle(a);
    await handle(b);
    await handle(cancelled(seller.id, buyer.id, a.data.bookingId, 400_00));
    expect(await totalsOf(seller.id, buyer.id)).toEqual({ totalBookings: 1, totalSpentMinor: 400_00, lifetimeValueMinor: 400_00 });
    await handle(cancelled(seller.id, buyer.id, b.data.bookingId, 999_00));
    expect(await totalsOf(seller.id, buyer.id)).toEqual({ totalBookings: 0, totalSpentMinor: 100_00, lifetimeValueMinor: 100_00 });
  });

  test('out of order: a cancel before its confirm ends in the same totals', async () => {
    const seller = newUser('seller');
    const buyer = newUser();
    const c = confirmed(seller.id, buyer.id, 500_00);
    const x = cancelled(seller.id, buyer.id, c.data.bookingId, 500_00);
    await handle(x);
    expect(await totalsOf(seller.id, buyer.id)).toEqual({ totalBookings: 0, totalSpentMinor: 0, lifetimeValueMinor: 0 });
    await handle(c);
    await handle(x);
    expect(await totalsOf(seller.id, buyer.id)).toEqual({ totalBookings: 0, totalSpentMinor: 0, lifetimeValueMinor: 0 });
  });

  test('session events move lastInteraction forward only', async () => {
    const seller = newUser('seller');
    const buyer = newUser();
    await handle(confirmed(seller.id, buyer.id, 100, undefined, '2030-01-01T10:00:00.000Z'));
    await handle(
      event('consultation.session.completed', {
        sessionId: 's',
        consultationId: 'c',
        sellerId: seller.id,
        buyerIds: [buyer.id],
        endedAt: '2030-01-02T10:00:00.000Z',
      }),
    );
    await handle(
      event('consultation.session.no_show', {
        sessionId: 's2',
        consultationId: 'c',
        sellerId: seller.id,
        buyerIds: [buyer.id],
        markedAt: '2029-01-01T00:00:00.000Z',
      }),
    );
    expect((await Relationship.findOne({ sellerId: seller.id, buyerId: buyer.id }).lean())!.lastInteraction).toEqual(
      new Date('2030-01-02T10:00:00.000Z'),
    );
  });

  test('totals can be rebuilt from the stored facts', async () => {
    const seller = newUser('seller');
    const buyer = newUser();
    await handle(confirmed(seller.id, buyer.id, 700_00));
    await Relationship.updateOne(
      { sellerId: seller.id, buyerId: buyer.id },
      { $set: { totalBookings: 99, totalSpentMinor: 1, lifetimeValueMinor: 1 } },
    );
    expect(await rebuildAll()).toBeGreaterThan(0);
    expect(await totalsOf(seller.id, buyer.id)).toEqual({ totalBookings: 1, totalSpentMinor: 700_00, lifetimeValueMinor: 700_00 });
  });
});

describe('through the broker', () => {
  test('published events are applied; a poison message is dead-lettered and the consumer goes on', async () => {
    const { bus } = crm();
    await bus.consume({ ...bookingsConsumer, retryDelaysMs: [50] });
    await bus.consume(usersConsumer);
    const seller = newUser('seller');
    const buyer = newUser();
    const poison = { ...confirmed(seller.id, buyer.id, 5), data: { totalAmountMinor: 'lots' } };
    await bus.publishRaw(bus.names.events, 'consultation.booking.confirmed', Buffer.from(JSON.stringify(poison)));
    await bus.publish(registered(buyer, 'Sara Tesfaye'));
    await bus.publish(confirmed(seller.id, buyer.id, 250_00));
    await waitFor(async () => (await totalsOf(seller.id, buyer.id))?.totalBookings === 1, { what: 'the confirmed booking in the totals' });
    expect(await totalsOf(seller.id, buyer.id)).toEqual({ totalBookings: 1, totalSpentMinor: 250_00, lifetimeValueMinor: 250_00 });
    const deadLetters = await readQueue(testServers().amqpUrl, env.queue('crm.bookings.dlq'));
    const dead = await deadLetters.waitFor((msg) => msg.json?.id === poison.id, 'the poison message');
    await deadLetters.close();
    expect(dead.json.data).toEqual({ totalAmountMinor: 'lots' });
  });
});
