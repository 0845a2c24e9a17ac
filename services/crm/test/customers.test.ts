import { bookingsConsumer, usersConsumer } from '../src/events/consumers';
import { as, cancelled, confirmed, log, newUser, registered, useCrm } from './harness';

const crm = useCrm();
const apply = async (e: { type: string }) => {
  const spec = e.type === 'identity.user.registered' ? usersConsumer : bookingsConsumer;
  await (spec.handlers as Record<string, (event: unknown, ctx: { log: typeof log }) => Promise<void>>)[e.type]!(e, { log });
};

describe('relationships', () => {
  test('the seller creates one per buyer (409 for a second) and reads, updates and deletes it', async () => {
    const seller = newUser('seller');
    const buyer = newUser();
    await apply(registered(buyer, 'Sara Tesfaye'));
    const create = () =>
      as(crm, seller)('POST', '/customers', {
        sellerId: seller.id,
        buyerId: buyer.id,
        status: 'Active',
        customerType: 'New',
        isFollower: true,
        followStatus: 'Following',
        notificationPreference: 'All',
        notes: 'met at the fair',
        tags: ['fair'],
        isFavorite: false,
      });
    const created = await create();
    expect(created.body.data).toMatchObject({
      sellerId: seller.id,
      buyerId: buyer.id,
      status: 'Active',
      customerType: 'New',
      isFollower: true,
    });
    expect(created.body.data.referenceId).toMatch(/^CUS_[A-Z0-9]{8}$/);
    expect((await create()).status).toBe(409);
    const id = created.body.data.id;
    const read = await as(crm, buyer)('GET', `/customers/${id}`);
    expect(read.body.data).toMatchObject({
      id,
      totalBookings: 0,
      totalSpent: 0,
      lifetimeValue: 0,
      lastInteraction: null,
      buyerName: 'Sara Tesfaye',
    });
    const updated = await as(crm, seller)('PUT', `/customers/${created.body.data.referenceId}`, {
      customerType: 'VIP',
      isFavorite: true,
      tags: ['vip'],
    });
    expect(updated.body.data).toMatchObject({ id, customerType: 'VIP', isFavorite: true });
    expect(Date.parse(updated.body.data.markedFavoriteAt)).not.toBeNaN();
    expect((await as(crm, seller)('PUT', `/customers/${id}`, { totalBookings: 5 })).status).toBe(400);
    expect((await as(crm, seller)('POST', '/customers', { sellerId: seller.id, buyerId: newUser().id, totalSpent: 10 })).status).toBe(400);
    expect((await as(crm, seller)('DELETE', `/customers/${id}`)).body.data).toEqual({ id, deleted: true });
    expect((await as(crm, seller)('GET', `/customers/${id}`)).status).toBe(404);
  });

  test('authorization: seller, buyer, another seller, admin, anonymous', async () => {
    const seller = newUser('seller');
    const buyer = newUser();
    const id = (await as(crm, seller)('POST', '/customers', { sellerId: seller.id, buyerId: buyer.id })).body.data.id;
    const cases: Array<[string, ReturnType<typeof newUser> | undefined, number, number, number]> = [
      ['seller', seller, 200, 200, 200],
      ['buyer', buyer, 200, 403, 403],
      ['another seller', newUser('seller'), 403, 403, 403],
      ['admin', newUser('admin'), 200, 200, 200],
      ['anonymous', undefined, 401, 401, 401],
    ];
    for (const [, user, read, update, analytics] of cases) {
      expect((await as(crm, user)('GET', `/customers/${id}`)).status).toBe(read);
      expect((await as(crm, user)('PUT', `/customers/${id}`, { notes: 'x' })).status).toBe(update);
      expect((await as(crm, user)('GET', `/customers/seller/${seller.id}/analytics`)).status).toBe(analytics);
    }
    expect((await as(crm, buyer)('POST', '/customers', { sellerId: seller.id, buyerId: newUser().id })).status).toBe(403);
    expect((await as(crm, seller)('GET', `/customers/buyer/${buyer.id}`)).status).toBe(403);
  });
});

describe('listings and analytics on a known data set', () => {
  const seller = newUser('seller');
  const [a, b, c] = [newUser(), newUser(), newUser()];
  beforeAll(async () => {
    await apply(registered(seller, 'Abebe Kebede'));
    for (const [user, name] of [
      [a, 'Almaz'],
      [b, 'Bekele'],
      [c, 'Chaltu'],
    ] as const)
      await apply(registered(user, name));
    await apply(confirmed(seller.id, a.id, 500_00, 'bk_a1', '2030-01-01T10:00:00.000Z'));
    await apply(confirmed(seller.id, a.id, 300_00, 'bk_a2', '2030-01-05T10:00:00.000Z'));
    await apply(confirmed(seller.id, b.id, 200_00, 'bk_b1'));
    await apply(confirmed(seller.id, b.id, 100_00, 'bk_b2'));
    await apply(cancelled(seller.id, b.id, 'bk_b2', 100_00));
    await as(crm, seller)('POST', '/customers', { sellerId: seller.id, buyerId: c.id, isFollower: true, status: 'Inactive' });
    const rel = await as(crm, seller)('GET', `/customers/seller/${seller.id}`);
    const aId = rel.body.data.customers.find((r: { buyerId: string }) => r.buyerId === a.id).id;
    await as(crm, seller)('PUT', `/customers/${aId}`, { isFavorite: true });
  });

  test('analytics', async () => {
    const res = await as(crm, seller)('GET', `/customers/seller/${seller.id}/analytics`);
    expect(res.body.data).toEqual({
      totalCustomers: 3,
      activeCustomers: 2,
      followers: 1,
      totalRevenue: 1000,
      averageOrderValue: 333.33,
      customerRetentionRate: 0.5,
    });
  });

  test('seller listings carry names, totals and their own fields', async () => {
    const all = await as(crm, seller)('GET', `/customers/seller/${seller.id}`);
    expect(all.body.data.total).toBe(3);
    expect(all.body.data.customers.find((r: { buyerName: string }) => r.buyerName === 'Almaz')).toMatchObject({
      totalBookings: 2,
      totalSpent: 800,
      customerType: 'New',
      isFollower: false,
    });
    const followers = await as(crm, seller)('GET', `/customers/seller/${seller.id}/followers`);
    expect(followers.body.data).toMatchObject({ total: 1, followers: [{ buyerName: 'Chaltu', totalBookings: 0 }] });
    expect(Date.parse(followers.body.data.followers[0].followedAt)).not.toBeNaN();
    const favorites = await as(crm, seller)('GET', `/customers/seller/${seller.id}/favorites`);
    expect(favorites.body.data).toMatchObject({ total: 1, favorites: [{ buyerName: 'Almaz', totalSpent: 800 }] });
    const high = await as(crm, seller)('GET', `/customers/seller/${seller.id}/high-value?minLifetimeValue=500`);
    expect(high.body.data).toMatchObject({ total: 1, customers: [{ buyerName: 'Almaz', lifetimeValue: 800, totalBookings: 2 }] });
    const paged = await as(crm, seller)('GET', `/customers/seller/${seller.id}?limit=1&page=2`);
    expect(paged.body.data.customers).toHaveLength(1);
    expect(paged.body.data.pagination).toEqual({ page: 2, limit: 1, total: 3 });
    const own = await as(crm, seller)('GET', '/customers?status=Inactive');
    expect(own.body.data.customers).toHaveLength(1);
    expect(own.body.data.pagination.total).toBe(1);
  });

  test('buyer listings: relationships, following, customers with bookings', async () => {
    const mine = await as(crm, a)('GET', `/customers/buyer/${a.id}`);
    expect(mine.body.data).toMatchObject({
      total: 1,
      relationships: [{ sellerName: 'Abebe Kebede', status: 'Active', isFollowing: false, totalBookings: 2, totalSpent: 800 }],
    });
    const following = await as(crm, c)('GET', `/customers/buyer/${c.id}/following`);
    expect(following.body.data).toMatchObject({ total: 1, following: [{ sellerName: 'Abebe Kebede', totalBookings: 0 }] });
    expect((await as(crm, c)('GET', `/customers/buyer/${c.id}/customers`)).body.data.total).toBe(0);
    const booked = await as(crm, a)('GET', `/customers/buyer/${a.id}/customers`);
    expect(booked.body.data.customers[0]).toMatchObject({
      sellerName: 'Abebe Kebede',
      totalBookings: 2,
      totalSpent: 800,
      lastBooking: '2030-01-05T10:00:00.000Z',
    });
    expect((await as(crm, b)('GET', `/customers/buyer/${b.id}/customers`)).body.data.customers[0]).toMatchObject({
      totalBookings: 1,
      totalSpent: 200,
    });
  });
});
