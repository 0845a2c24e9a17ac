import { call, listenForEvents, testServers } from '@mkt/infra';
import { as, confirmed, env, log, newUser, registered, tokenOf, useCrm } from './harness';

const crm = useCrm();
const { bookings: bookingsConsumer, users: usersConsumer } = crm.parts.consumers;
const Relationship = crm.parts.models.relationships;
const apply = async (e: { type: string }) => {
  const spec = e.type === 'identity.user.registered' ? usersConsumer : bookingsConsumer;
  await (spec.handlers as Record<string, (event: unknown, ctx: { log: typeof log }) => Promise<void>>)[e.type]!(e, { log });
};

describe('an admin’s change of a seller’s customer relationship is audited', () => {
  test('the admin’s create and update each carry one entry; the seller’s own update, a refused one and a duplicate create none', async () => {
    const events = await listenForEvents(testServers().amqpUrl, env.events, ['crm.admin_action.recorded']);
    const seller = newUser('seller');
    const buyer = newUser();
    const admin = newUser('admin');
    await apply(registered(seller, 'A seller'));
    await apply(registered(buyer, 'A buyer'));
    await apply(confirmed(seller.id, buyer.id, 100_00));
    await Relationship.deleteOne({ sellerId: seller.id, buyerId: buyer.id });

    const create = () => as(crm, admin)('POST', '/customers', { sellerId: seller.id, buyerId: buyer.id, notes: 'added by support' });
    const created = await create();
    expect(created.status).toBe(200);
    const id: string = created.body.data.id;
    expect((await create()).status).toBe(409); // a duplicate: nothing
    expect((await as(crm, seller)('PUT', `/customers/${id}`, { tags: ['fair'] })).status).toBe(200); // the seller's own: nothing
    expect((await as(crm, newUser('seller'))('PUT', `/customers/${id}`, { notes: 'x' })).status).toBe(403); // refused: nothing
    expect((await as(crm, admin)('PUT', `/customers/${id}`, { notes: 'checked', tags: ['fair'] })).status).toBe(200);

    await events.waitFor((m) => m.json.data.targetId === id && m.json.data.action === 'customer.edit', 'the edit entry');
    await events.settle();
    const entries = events.seen.map((m) => m.json).filter((e) => e.data.targetId === id);
    expect(entries.map((e) => e.data)).toEqual([
      expect.objectContaining({
        action: 'customer.create',
        actorId: admin.id,
        targetType: 'customer',
        before: null,
        after: expect.objectContaining({ sellerId: seller.id, buyerId: buyer.id, notes: 'added by support' }),
      }),
      expect.objectContaining({ action: 'customer.edit', before: { notes: 'added by support' }, after: { notes: 'checked' } }),
    ]);
    expect(entries.every((e) => e.source === 'crm')).toBe(true);
    await events.close();
  });
});

describe('an admin’s delete of a customer relationship is audited', () => {
  /** A seller and a buyer who booked with it: the relationship the booking opened. */
  async function givenRelationship() {
    const seller = newUser('seller');
    const buyer = newUser();
    await apply(registered(seller, 'A seller'));
    await apply(registered(buyer, 'A buyer'));
    await apply(confirmed(seller.id, buyer.id, 100_00));
    const doc = await Relationship.findOne({ sellerId: seller.id, buyerId: buyer.id }).lean();
    return { seller, buyer, id: doc!._id as string };
  }

  test('the admin’s delete carries one entry with the relationship before; the seller’s and buyer’s own deletes none', async () => {
    const events = await listenForEvents(testServers().amqpUrl, env.events, ['crm.admin_action.recorded']);
    const admin = newUser('admin');
    const bySeller = await givenRelationship();
    const byBuyer = await givenRelationship();
    const byAdmin = await givenRelationship();
    expect((await as(crm, bySeller.seller)('DELETE', `/customers/${bySeller.id}`)).status).toBe(200);
    expect((await as(crm, byBuyer.buyer)('DELETE', `/customers/${byBuyer.id}`)).status).toBe(200);
    const deleted = await call(crm().url, 'DELETE', `/customers/${byAdmin.id}`, {
      token: tokenOf(admin),
      headers: { 'x-request-id': `delete-${byAdmin.id}` },
    });
    expect(deleted.status).toBe(200);
    expect((await as(crm, admin)('DELETE', `/customers/${byAdmin.id}`)).status).toBe(404); // gone: nothing

    await events.waitFor((m) => m.json.data.targetId === byAdmin.id, 'the delete entry');
    await events.settle();
    const of = (id: string) => events.seen.map((m) => m.json).filter((e) => e.data.targetId === id);
    expect(of(byAdmin.id).map((e) => e.data)).toEqual([
      expect.objectContaining({
        action: 'customer.delete',
        actorId: admin.id,
        targetType: 'customer',
        requestId: `delete-${byAdmin.id}`,
        before: expect.objectContaining({ sellerId: byAdmin.seller.id, buyerId: byAdmin.buyer.id, totalBookings: 1 }),
        after: null,
      }),
    ]);
    expect([...of(bySeller.id), ...of(byBuyer.id)]).toEqual([]);
    await events.close();
  });

  test('racing a booking’s totals: a relationship gone has exactly one entry, one still there (409) none', async () => {
    const events = await listenForEvents(testServers().amqpUrl, env.events, ['crm.admin_action.recorded']);
    const admin = newUser('admin');
    const pairs = await Promise.all(Array.from({ length: 6 }, () => givenRelationship()));
    const outcomes = await Promise.all(
      pairs.map(async ({ seller, buyer, id }) => {
        const [deleted] = await Promise.all([as(crm, admin)('DELETE', `/customers/${id}`), apply(confirmed(seller.id, buyer.id, 50_00))]);
        return { id, status: deleted.status, gone: (await Relationship.exists({ _id: id })) === null };
      }),
    );
    for (const { id, gone } of outcomes) if (gone) await events.waitFor((m) => m.json.data.targetId === id, `the delete of ${id}`);
    await events.settle();
    for (const { id, status, gone } of outcomes) {
      expect({ id, status }).toEqual({ id, status: gone ? 200 : 409 });
      expect(events.seen.filter((m) => m.json.data.targetId === id && m.json.data.action === 'customer.delete')).toHaveLength(gone ? 1 : 0);
    }
    await events.close();
  });
});
