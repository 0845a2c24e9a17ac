import { listenForEvents, testServers } from '@mkt/infra';
import { call, env, newUser, PHONE, tokenOf, useCatalog } from './harness';

const catalog = useCatalog();
const base = '/physical-products/seller-products';
const product = PHONE;
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

describe('an admin’s delete of a seller’s product is audited', () => {
  test('racing the seller’s edits and another admin’s delete: a product gone has exactly one entry, one still there none', async () => {
    const events = await listenForEvents(testServers().amqpUrl, env.events, ['catalog.admin_action.recorded']);
    const seller = newUser('seller');
    const [admin, other] = [newUser('admin'), newUser('admin')];
    const ids: string[] = [];
    for (let i = 0; i < 8; i += 1) ids.push((await as(seller, 'POST', `${base}/`, product)).body.data.id as string);

    const outcomes = await Promise.all(
      ids.map(async (id, i) => {
        const [deleted, again] = await Promise.all([
          as(admin, 'DELETE', `${base}/${id}`, undefined, `delete-${id}`),
          as(other, 'DELETE', `${base}/${id}`, undefined, `again-${id}`),
          as(seller, 'PATCH', `${base}/${id}`, { stock: i }),
        ]);
        const gone = (await as(seller, 'GET', `${base}/${id}`)).status === 404;
        return { id, statuses: [deleted.status, again.status], gone };
      }),
    );
    for (const { id, gone } of outcomes)
      if (gone) await events.waitFor((m) => m.json.data.targetId === id && m.json.data.action === 'product.delete', `the delete of ${id}`);
    await events.settle();
    for (const { id, statuses, gone } of outcomes) {
      const deletes = events.seen.map((m) => m.json).filter((e) => e.data.targetId === id && e.data.action === 'product.delete');
      // At most one delete succeeds; the other is refused (the claim is held, or the product is gone or changed).
      expect(statuses.filter((status) => status === 200).length).toBeLessThanOrEqual(1);
      expect(statuses.every((status) => [200, 404, 409].includes(status))).toBe(true);
      expect({ id, entries: deletes.length }).toEqual({ id, entries: gone ? 1 : 0 });
      if (gone)
        expect(deletes[0]!.data).toMatchObject({ actorRole: 'admin', requestId: statuses[0] === 200 ? `delete-${id}` : `again-${id}` });
    }
    await events.close();
  });

  test('the seller’s own delete records nothing; an admin’s delete of a product gone already is 404 and records nothing', async () => {
    const events = await listenForEvents(testServers().amqpUrl, env.events, ['catalog.admin_action.recorded']);
    const seller = newUser('seller');
    const id = (await as(seller, 'POST', `${base}/`, product)).body.data.id as string;
    expect((await as(seller, 'DELETE', `${base}/${id}`)).status).toBe(200);
    expect((await as(newUser('admin'), 'DELETE', `${base}/${id}`)).status).toBe(404);
    await events.settle();
    expect(events.seen.filter((m) => m.json.data.targetId === id)).toEqual([]);
    await events.close();
  });
});
