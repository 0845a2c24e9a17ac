import { listenForEvents, testServers } from '@mkt/infra';
import { as, confirmed, env, log, newUser, registered, useCrm } from './harness';

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
