import { listenForEvents, testServers } from '@mkt/infra';
import { call, env, newUser, tokenOf, useCatalog } from './harness';

const catalog = useCatalog();
const base = '/physical-products/seller-products';
const ELECTRONICS = 'MKT-CAT-ELECTRON';
const product = {
  name: 'Tecno Spark 20',
  description: '<p>A phone</p>',
  sellingPrice: 12999.99,
  stock: 12,
  shippingHandler: 'Seller',
  categoryId: ELECTRONICS,
};
const as = (user: ReturnType<typeof newUser>, method: string, path: string, body?: object, requestId?: string) =>
  call(catalog(), method, path, { token: tokenOf(user), body, headers: requestId ? { 'x-request-id': requestId } : undefined });

describe('an admin’s change of a seller’s product is audited', () => {
  test('the admin’s edit and visibility change each carry one entry with before and after; the seller’s own and refused ones none', async () => {
    const events = await listenForEvents(testServers().amqpUrl, env.events, ['catalog.admin_action.recorded']);
    const seller = newUser('seller');
    const admin = newUser('admin');
    const id = (await as(seller, 'POST', `${base}/`, product)).body.data.id as string;
    const entries = () => events.seen.map((message) => message.json).filter((event) => event.data.targetId === id);

    expect((await as(seller, 'PATCH', `${base}/${id}`, { stock: 10 })).status).toBe(200); // the seller's own: nothing
    expect((await as(seller, 'PATCH', `${base}/${id}/visibility`, { visibility: 'Hidden' })).status).toBe(200);
    expect((await as(newUser('seller'), 'PATCH', `${base}/${id}`, { stock: 1 })).status).toBe(404); // another seller: nothing
    expect((await as(admin, 'PATCH', `${base}/${id}`, { sellingPrice: 10, comparePrice: 5 })).status).toBeGreaterThanOrEqual(400); // refused: nothing
    const edited = await as(admin, 'PATCH', `${base}/${id}`, { name: 'Tecno Spark 20 Pro', stock: 10 }, `edit-${id}`);
    expect(edited.status).toBe(200);
    expect(edited.body.data).toMatchObject({ name: 'Tecno Spark 20 Pro', stock: 10 });
    expect((await as(admin, 'PATCH', `${base}/${id}/visibility`, { visibility: 'Public' })).status).toBe(200);

    await events.waitFor((m) => m.json.data.targetId === id && m.json.data.action === 'product.visibility', 'the visibility entry');
    await events.settle();
    expect(entries().map((event) => event.data)).toEqual([
      expect.objectContaining({
        action: 'product.edit',
        actorId: admin.id,
        actorRole: 'admin',
        targetType: 'product',
        targetId: id,
        requestId: `edit-${id}`,
        before: { name: 'Tecno Spark 20' },
        after: { name: 'Tecno Spark 20 Pro' },
      }),
      expect.objectContaining({ action: 'product.visibility', before: { visibility: 'Hidden' }, after: { visibility: 'Public' } }),
    ]);
    expect(entries().every((event) => event.source === 'catalog')).toBe(true);
    await events.close();
  });
});
