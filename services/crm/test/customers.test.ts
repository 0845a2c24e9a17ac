import { bookingsConsumer, usersConsumer } from '../src/events/consumers';
import { waitFor } from '@mkt/infra';
import { KnownUser, Relationship } from '../src/db/crm.models';
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
    const read = await as(crm, seller)('GET', `/customers/${id}`);
    expect(read.body.data).toMatchObject({
      id,
      notes: 'met at the fair',
      tags: ['fair'],
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
    await apply(registered(buyer, 'Buyer'));
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

describe('forged relationships (issue 12)', () => {
  const post = (user: ReturnType<typeof newUser>, body: object) => as(crm, user)('POST', '/customers', body);

  test('a seller records relationships for itself only; buyers and admins-for-unknown-sellers cannot', async () => {
    const seller = newUser('seller');
    const victim = newUser('seller');
    const buyer = newUser();
    await apply(registered(seller, 'Seller'));
    await apply(registered(victim, 'Victim'));
    await apply(registered(buyer, 'Buyer'));
    const forged = await post(seller, { sellerId: victim.id, buyerId: buyer.id, isFollower: true });
    expect(forged.status).toBe(403);
    // A buyer naming itself as the seller used to put itself in the victim's "following".
    const selfMade = await post(buyer, { sellerId: buyer.id, buyerId: victim.id, isFollower: true });
    expect(selfMade.status).toBe(403);
    expect((await as(crm, victim)('GET', `/customers/buyer/${victim.id}/following`)).body.data.total).toBe(0);
    expect((await as(crm, victim)('GET', `/customers/seller/${victim.id}/followers`)).body.data.total).toBe(0);
    const byAdmin = await post(newUser('admin'), { sellerId: victim.id, buyerId: buyer.id });
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.body.data).toMatchObject({ sellerId: victim.id, buyerId: buyer.id });
    const unknownSeller = await post(newUser('admin'), { sellerId: newUser('seller').id, buyerId: buyer.id });
    expect(unknownSeller.status).toBe(404);
    expect(unknownSeller.body.errors[0]).toMatchObject({ path: 'sellerId', code: 'not_found' });
  });

  test('the buyer must be a registered user: unknown is 404 naming buyerId, nothing created', async () => {
    const seller = newUser('seller');
    const ghost = newUser();
    const res = await post(seller, { sellerId: seller.id, buyerId: ghost.id });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ success: false, errors: [{ path: 'buyerId', code: 'not_found' }] });
    expect(await Relationship.countDocuments({ buyerId: ghost.id })).toBe(0);
  });

  test('a buyer whose registration event is still on its way is waited for (up to 2 s)', async () => {
    const seller = newUser('seller');
    const buyer = newUser();
    const lookups = jest.spyOn(KnownUser, 'findOne');
    const pending = post(seller, { sellerId: seller.id, buyerId: buyer.ref });
    // The event lands while the create is already waiting for it: after it has looked once.
    await waitFor(() => lookups.mock.calls.some(([filter]) => JSON.stringify(filter).includes(buyer.ref)), {
      what: 'the create to look for the buyer',
    });
    lookups.mockRestore();
    await apply(registered(buyer, 'Late Buyer'));
    const res = await pending;
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ sellerId: seller.id, buyerId: buyer.id });
  });

  test('ids or USR references both name the seller and the buyer; stored by id', async () => {
    const seller = newUser('seller');
    const buyer = newUser();
    await apply(registered(buyer, 'Buyer'));
    const res = await post(seller, { sellerId: seller.ref, buyerId: buyer.ref });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ sellerId: seller.id, buyerId: buyer.id });
    expect((await post(seller, { sellerId: seller.id, buyerId: buyer.id })).status).toBe(409);
    const listed = await as(crm, seller)('GET', `/customers/seller/${seller.ref}`);
    expect(listed.body.data.customers.map((c: { buyerId: string }) => c.buyerId)).toEqual([buyer.id]);
    expect((await as(crm, buyer)('GET', `/customers/buyer/${buyer.ref}`)).body.data.total).toBe(1);
    expect((await as(crm, buyer)('GET', `/customers/seller/${seller.ref}`)).status).toBe(403);
  });

  test('the buyer named may remove it; another user may not', async () => {
    const seller = newUser('seller');
    const buyer = newUser();
    await apply(registered(buyer, 'Buyer'));
    const id = (await post(seller, { sellerId: seller.id, buyerId: buyer.id, isFollower: true })).body.data.id;
    expect((await as(crm, newUser())('DELETE', `/customers/${id}`)).status).toBe(403);
    expect((await as(crm, newUser('seller'))('DELETE', `/customers/${id}`)).status).toBe(403);
    expect((await as(crm, buyer)('DELETE', `/customers/${id}`)).body.data).toEqual({ id, deleted: true });
    expect((await as(crm, buyer)('GET', `/customers/buyer/${buyer.id}/following`)).body.data.total).toBe(0);
  });

  test('a buyer reads the relationship without the seller’s private notes and tags', async () => {
    const seller = newUser('seller');
    const buyer = newUser();
    await apply(registered(buyer, 'Buyer'));
    const id = (await post(seller, { sellerId: seller.id, buyerId: buyer.id, notes: 'haggles a lot', tags: ['difficult'] })).body.data.id;
    const asBuyer = await as(crm, buyer)('GET', `/customers/${id}`);
    expect(asBuyer.status).toBe(200);
    expect(asBuyer.body.data).toMatchObject({ id, notes: '', tags: [] });
    expect(JSON.stringify(asBuyer.body)).not.toMatch(/haggles|difficult/);
    expect((await as(crm, seller)('GET', `/customers/${id}`)).body.data).toMatchObject({ notes: 'haggles a lot', tags: ['difficult'] });
    expect((await as(crm, newUser('admin'))('GET', `/customers/${id}`)).body.data).toMatchObject({ notes: 'haggles a lot' });
  });
});

describe('a method a path does not serve', () => {
  test('is 405 with Allow in the envelope', async () => {
    const res = await as(crm, newUser('seller'))('PATCH', '/customers');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, POST');
    expect(res.body).toMatchObject({ success: false, errors: [{ code: 'method_not_allowed' }] });
  });
});
