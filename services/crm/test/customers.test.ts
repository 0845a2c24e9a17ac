import { as, cancelled, confirmed, log, newUser, registered, useCrm } from './harness';

const crm = useCrm();
const { bookings: bookingsConsumer, users: usersConsumer } = crm.parts.consumers;
const Relationship = crm.parts.models.relationships;
const apply = async (e: { type: string }) => {
  const spec = e.type === 'identity.user.registered' ? usersConsumer : bookingsConsumer;
  await (spec.handlers as Record<string, (event: unknown, ctx: { log: typeof log }) => Promise<void>>)[e.type]!(e, { log });
};
type User = ReturnType<typeof newUser>;
/** A registered buyer with a confirmed booking of the seller's (which opens their relationship). */
const booked = async (seller: User, buyer: User, name = 'Buyer') => {
  await apply(registered(buyer, name));
  await apply(confirmed(seller.id, buyer.id, 100_00));
};
/** As `booked`, with the relationship the booking opened removed (as its seller or buyer may): a create may make it again. */
const bookedWithoutRelationship = async (seller: User, buyer: User, name = 'Buyer') => {
  await booked(seller, buyer, name);
  await Relationship.deleteOne({ sellerId: seller.id, buyerId: buyer.id });
};
const relationshipOf = async (seller: User, buyer: User) =>
  (await Relationship.findOne({ sellerId: seller.id, buyerId: buyer.id }).lean())!._id;

describe('relationships', () => {
  test('the seller creates one per buyer (409 for a second) and reads, updates and deletes it', async () => {
    const seller = newUser('seller');
    const buyer = newUser();
    await bookedWithoutRelationship(seller, buyer, 'Sara Tesfaye');
    const create = () =>
      as(crm, seller)('POST', '/customers', {
        sellerId: seller.id,
        buyerId: buyer.id,
        status: 'Active',
        customerType: 'New',
        isFollower: false,
        followStatus: 'NotFollowing',
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
      isFollower: false,
    });
    expect(created.body.data.referenceId).toMatch(/^CUS_[A-Z0-9]{8}$/);
    expect((await create()).status).toBe(409);
    const id = created.body.data.id;
    const read = await as(crm, seller)('GET', `/customers/${id}`);
    expect(read.body.data).toMatchObject({
      id,
      notes: 'met at the fair',
      tags: ['fair'],
      buyerName: 'Sara Tesfaye',
      // From the booking that let the seller name the buyer.
      totalBookings: 1,
      totalSpent: 100,
      lifetimeValue: 100,
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
    await booked(seller, buyer);
    const id = await relationshipOf(seller, buyer);
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
    // Chaltu booked and cancelled in full (no booking, nothing spent), then followed the seller.
    await apply(confirmed(seller.id, c.id, 50_00, 'bk_c1'));
    await apply(cancelled(seller.id, c.id, 'bk_c1', 50_00));
    const rel = await as(crm, seller)('GET', `/customers/seller/${seller.id}`);
    const idOf = (user: User) => rel.body.data.customers.find((r: { buyerId: string }) => r.buyerId === user.id).id;
    await as(crm, seller)('PUT', `/customers/${idOf(a)}`, { isFavorite: true });
    await as(crm, seller)('PUT', `/customers/${idOf(c)}`, { status: 'Inactive' });
    await as(crm, c)('PUT', `/customers/${idOf(c)}`, { isFollower: true });
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
    const boughtFrom = await as(crm, a)('GET', `/customers/buyer/${a.id}/customers`);
    expect(boughtFrom.body.data.customers[0]).toMatchObject({
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

describe('forged relationships', () => {
  const post = (user: User, body: object) => as(crm, user)('POST', '/customers', body);

  test('a seller records relationships for itself only; buyers and admins-for-unknown-sellers cannot', async () => {
    const seller = newUser('seller');
    const victim = newUser('seller');
    const buyer = newUser();
    await apply(registered(seller, 'Seller'));
    await apply(registered(victim, 'Victim'));
    await bookedWithoutRelationship(victim, buyer);
    const forged = await post(seller, { sellerId: victim.id, buyerId: buyer.id });
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

  test('ids or USR references both name the seller and the buyer; stored by id', async () => {
    const seller = newUser('seller');
    const buyer = newUser();
    await bookedWithoutRelationship(seller, buyer);
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
    await booked(seller, buyer);
    const id = await relationshipOf(seller, buyer);
    expect((await as(crm, buyer)('PUT', `/customers/${id}`, { isFollower: true })).status).toBe(200);
    expect((await as(crm, newUser())('DELETE', `/customers/${id}`)).status).toBe(403);
    expect((await as(crm, newUser('seller'))('DELETE', `/customers/${id}`)).status).toBe(403);
    expect((await as(crm, buyer)('DELETE', `/customers/${id}`)).body.data).toEqual({ id, deleted: true });
    expect((await as(crm, buyer)('GET', `/customers/buyer/${buyer.id}/following`)).body.data.total).toBe(0);
  });

  test('a buyer reads the relationship without the seller’s private notes and tags', async () => {
    const seller = newUser('seller');
    const buyer = newUser();
    await bookedWithoutRelationship(seller, buyer);
    const id = (await post(seller, { sellerId: seller.id, buyerId: buyer.id, notes: 'haggles a lot', tags: ['difficult'] })).body.data.id;
    const asBuyer = await as(crm, buyer)('GET', `/customers/${id}`);
    expect(asBuyer.status).toBe(200);
    expect(asBuyer.body.data).toMatchObject({ id, notes: '', tags: [] });
    expect(JSON.stringify(asBuyer.body)).not.toMatch(/haggles|difficult/);
    expect((await as(crm, seller)('GET', `/customers/${id}`)).body.data).toMatchObject({ notes: 'haggles a lot', tags: ['difficult'] });
    expect((await as(crm, newUser('admin'))('GET', `/customers/${id}`)).body.data).toMatchObject({ notes: 'haggles a lot' });
  });
});

describe('named customers: only the seller’s own buyers, one answer for everyone else', () => {
  const post = (user: User, body: object) => as(crm, user)('POST', '/customers', body);

  test('the admin, a rival seller, the seller itself, a buyer who never booked with it, an unknown user: one 422, nothing created, no name shown; a buyer who booked (even cancelled since) is fine', async () => {
    const seller = newUser('seller');
    const rival = newUser('seller');
    const admin = newUser('admin');
    const stranger = newUser();
    const othersBuyer = newUser();
    await apply(registered(seller, 'Seller'));
    await apply(registered(rival, 'Rival Seller'));
    await apply(registered(admin, 'The Admin'));
    await apply(registered(stranger, 'Stranger Buyer'));
    // A buyer of the rival's, not of this seller's.
    await booked(rival, othersBuyer, 'Rival Customer');
    const named = [admin.id, rival.ref, seller.id, stranger.id, othersBuyer.ref, newUser().id];
    const answers = [];
    for (const buyerId of named) answers.push(await post(seller, { sellerId: seller.id, buyerId }));
    for (const res of answers) {
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        success: false,
        message: 'Name a buyer who has booked with this seller',
        errors: [{ path: 'buyerId', code: 'not_eligible', message: 'Name a buyer who has booked with this seller' }],
      });
    }
    expect(await Relationship.countDocuments({ sellerId: seller.id })).toBe(0);
    const listed = await as(crm, seller)('GET', `/customers/seller/${seller.id}`);
    expect(listed.body.data.total).toBe(0);
    expect(JSON.stringify(listed.body)).not.toMatch(/Admin|Rival|Stranger/);
    // An admin is held to the same rule: the rival's buyer is not this seller's customer.
    expect((await post(admin, { sellerId: seller.id, buyerId: othersBuyer.id })).status).toBe(422);

    // A buyer who booked with the seller is one, even with the booking cancelled since.
    const buyer = newUser();
    await apply(registered(buyer, 'Buyer'));
    const booking = confirmed(seller.id, buyer.id, 100_00);
    await apply(booking);
    await apply(cancelled(seller.id, buyer.id, booking.data.bookingId, 100_00));
    await Relationship.deleteOne({ sellerId: seller.id, buyerId: buyer.id });
    expect((await post(seller, { sellerId: seller.id, buyerId: buyer.ref })).status).toBe(200);
  });

  test('following is the buyer’s: a seller cannot make a buyer follow it, nor unfollow them; the buyer can', async () => {
    const seller = newUser('seller');
    const buyer = newUser();
    await bookedWithoutRelationship(seller, buyer);
    for (const follow of [{ isFollower: true }, { followStatus: 'Following' }]) {
      const res = await post(seller, { sellerId: seller.id, buyerId: buyer.id, ...follow });
      expect(res.status).toBe(403);
      expect(res.body.errors[0]).toMatchObject({ path: 'isFollower', code: 'forbidden' });
    }
    const id = (await post(seller, { sellerId: seller.id, buyerId: buyer.id, isFollower: false, followStatus: 'NotFollowing' })).body.data
      .id;
    const followers = async () => (await as(crm, seller)('GET', `/customers/seller/${seller.id}/followers`)).body.data.total;
    for (const follow of [{ isFollower: true }, { followStatus: 'Following' }, { isFollower: true, isFavorite: true }])
      expect((await as(crm, seller)('PUT', `/customers/${id}`, follow)).status).toBe(403);
    expect(await followers()).toBe(0);
    // Sending back what it read changes nothing and is fine.
    expect((await as(crm, seller)('PUT', `/customers/${id}`, { isFollower: false, notes: 'kind' })).status).toBe(200);

    expect((await as(crm, buyer)('PUT', `/customers/${id}`, { notes: 'mine now' })).status).toBe(403);
    expect((await as(crm, buyer)('PUT', `/customers/${id}`, { isFollower: true, followStatus: 'NotFollowing' })).status).toBe(422);
    const followed = await as(crm, buyer)('PUT', `/customers/${id}`, { followStatus: 'Following' });
    expect(followed.status).toBe(200);
    const read = (await as(crm, seller)('GET', `/customers/${id}`)).body.data;
    expect(read).toMatchObject({ isFollower: true, followStatus: 'Following', notes: 'kind' });
    expect(Date.parse(read.followedAt)).not.toBeNaN();
    expect(await followers()).toBe(1);
    expect((await as(crm, seller)('PUT', `/customers/${id}`, { isFollower: false })).status).toBe(403);
    expect((await as(crm, seller)('PUT', `/customers/${id}`, { isFollower: true, customerType: 'VIP' })).status).toBe(200);
    expect((await as(crm, buyer)('PUT', `/customers/${id}`, { isFollower: false })).status).toBe(200);
    expect(await followers()).toBe(0);
    expect((await as(crm, seller)('GET', `/customers/${id}`)).body.data).toMatchObject({
      isFollower: false,
      followStatus: 'NotFollowing',
      followedAt: null,
      customerType: 'VIP',
    });
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
