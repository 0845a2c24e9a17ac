import { CreateCustomerBody, UpdateCustomerBody } from '@mkt/contracts';
import { AppError } from '@mkt/kit/domain';
import type { AuthenticatedUser } from '@mkt/kit/http';
import {
  assertDeleter,
  assertReader,
  createFollow,
  decideCreate,
  decideUpdate,
  listingOwner,
  ownScope,
  relationshipDeletion,
  resolveBuyer,
  resolveSeller,
  seesSellerNotes,
} from '../../src/domain/relationships';
import type { KnownUser, Relationship } from '../../src/domain/records';

// The rules of the CRM's README ("Who may do what"), decided without a server or a database.

const user = (role: AuthenticatedUser['role'], id: string): AuthenticatedUser => ({ id, ref: `MKT-USR-${id}`, role, email: '', name: '' });
const seller = user('seller', 'seller-1');
const rival = user('seller', 'seller-2');
const buyer = user('buyer', 'buyer-1');
const other = user('buyer', 'buyer-2');
const admin = user('admin', 'admin-1');
const known = (who: AuthenticatedUser): KnownUser => ({ _id: who.id, referenceId: who.ref, fullName: who.name, role: who.role });

const at = new Date('2030-01-01T00:00:00Z');
const now = new Date('2030-02-01T00:00:00Z');
const relationship = (over: Partial<Relationship> = {}): Relationship => ({
  _id: 'cus_1',
  referenceId: 'CUS_1',
  sellerId: seller.id,
  buyerId: buyer.id,
  status: 'Active',
  customerType: 'New',
  isFollower: false,
  followStatus: 'NotFollowing',
  notificationPreference: 'All',
  notes: 'n',
  tags: ['t'],
  isFavorite: false,
  followedAt: null,
  markedFavoriteAt: null,
  sellerCategory: null,
  totalBookings: 1,
  totalSpentMinor: 100,
  lifetimeValueMinor: 100,
  lastInteraction: at,
  lastBooking: at,
  createdAt: at,
  updatedAt: at,
  ...over,
});

type Outcome = 'ok' | { status: number; code: string; path?: string };
function outcome(decide: () => unknown): Outcome {
  try {
    decide();
    return 'ok';
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { status: err.status, code: err.code, ...(err.items[0] ? { path: err.items[0].path } : {}) };
  }
}
const forbidden = { status: 403, code: 'forbidden' };
const notEligible = { status: 422, code: 'not_eligible', path: 'buyerId' };

describe('create: a seller for itself only; an admin for any seller the CRM knows', () => {
  const cases: Array<[string, AuthenticatedUser, string, KnownUser | null, Outcome | string]> = [
    ['a seller naming itself by id', seller, seller.id, null, seller.id],
    ['a seller naming itself by reference', seller, seller.ref, null, seller.id],
    ['a seller naming a rival', seller, rival.id, null, forbidden],
    ['a buyer', buyer, buyer.id, null, forbidden],
    ['an admin naming a known seller (by reference)', admin, rival.ref, known(rival), rival.id],
    ['an admin naming an unknown seller', admin, 'nobody', null, { status: 404, code: 'not_found', path: 'sellerId' }],
    ['an admin naming a buyer as the seller', admin, buyer.id, known(buyer), { status: 404, code: 'not_found', path: 'sellerId' }],
  ];
  test.each(cases)('%s', (_name, who, sellerKey, named, expected) => {
    let sellerId: string | undefined;
    const result = outcome(() => (sellerId = resolveSeller(who, { sellerId: sellerKey }, named)));
    if (typeof expected === 'string') expect(sellerId).toBe(expected);
    else expect(result).toEqual(expected);
  });
});

describe("create: the buyer must be one of the seller's customers — one answer for every other", () => {
  const cases: Array<[string, KnownUser | null, boolean, Outcome]> = [
    ['a buyer who booked', known(buyer), true, 'ok'],
    ['a buyer who never booked with the seller', known(buyer), false, notEligible],
    ['someone unknown', null, false, notEligible],
    ['a seller (the seller itself or a rival)', known(rival), true, notEligible],
    ['the admin', known(admin), true, notEligible],
  ];
  test.each(cases)('%s', (_name, named, booked, expected) => {
    expect(outcome(() => resolveBuyer(named, booked))).toEqual(expected);
  });
});

describe("following is the buyer's: a seller's create may not set it; the two fields must agree", () => {
  const cases: Array<[string, AuthenticatedUser, Record<string, unknown>, Outcome | boolean]> = [
    ['a seller, nothing sent', seller, {}, false],
    ['a seller, isFollower false', seller, { isFollower: false }, false],
    ['a seller, NotFollowing', seller, { followStatus: 'NotFollowing' }, false],
    ['a seller, isFollower true', seller, { isFollower: true }, { ...forbidden, path: 'isFollower' }],
    ['a seller, Following', seller, { followStatus: 'Following' }, { ...forbidden, path: 'isFollower' }],
    ['an admin, Following', admin, { followStatus: 'Following' }, true],
    [
      'the two disagreeing',
      admin,
      { isFollower: true, followStatus: 'NotFollowing' },
      { status: 422, code: 'invalid', path: 'followStatus' },
    ],
  ];
  test.each(cases)('%s', (_name, who, fields, expected) => {
    const body = CreateCustomerBody.parse({ sellerId: seller.id, buyerId: buyer.id, ...fields });
    let follow: boolean | undefined;
    const result = outcome(() => (follow = createFollow(who, body)));
    if (typeof expected === 'boolean') expect(follow).toBe(expected);
    else expect(result).toEqual(expected);
  });

  test("a created relationship stamps following and favourite when on; the pair overrides the body's keys", () => {
    const body = CreateCustomerBody.parse({ sellerId: seller.ref, buyerId: buyer.ref, isFavorite: true, notes: 'x' });
    const pair = { sellerId: seller.id, buyerId: buyer.id };
    expect(decideCreate(body, pair, true, { id: 'cus_9', referenceId: 'CUS_9' }, now)).toMatchObject({
      _id: 'cus_9',
      referenceId: 'CUS_9',
      ...pair,
      notes: 'x',
      isFollower: true,
      followStatus: 'Following',
      followedAt: now,
      markedFavoriteAt: now,
    });
    expect(decideCreate({ ...body, isFavorite: false }, pair, false, { id: 'c', referenceId: 'C' }, now)).toMatchObject({
      isFollower: false,
      followStatus: 'NotFollowing',
      followedAt: null,
      markedFavoriteAt: null,
    });
  });
});

describe("read: its seller, its buyer, an admin; the buyer reads the seller's notes and tags blank", () => {
  test.each<[string, AuthenticatedUser, Outcome, boolean]>([
    ['its seller', seller, 'ok', true],
    ['its buyer', buyer, 'ok', false],
    ['an admin', admin, 'ok', true],
    ['a rival seller', rival, forbidden, false],
    ['another buyer', other, forbidden, false],
  ])('%s', (_name, who, expected, notes) => {
    expect(outcome(() => assertReader(who, relationship()))).toEqual(expected);
    if (expected === 'ok') expect(seesSellerNotes(who, relationship())).toBe(notes);
  });
});

describe('update: its seller or an admin; its buyer only following', () => {
  const cases: Array<[string, AuthenticatedUser, Partial<Relationship>, Record<string, unknown>, Outcome | Record<string, unknown>]> = [
    ['the seller changes its fields', seller, {}, { status: 'Blocked', notes: 'x' }, { status: 'Blocked', notes: 'x' }],
    ['the seller favourites: stamped', seller, {}, { isFavorite: true }, { isFavorite: true, markedFavoriteAt: now }],
    [
      'the seller unfavourites: cleared',
      seller,
      { isFavorite: true, markedFavoriteAt: at },
      { isFavorite: false },
      { isFavorite: false, markedFavoriteAt: null },
    ],
    [
      'the seller re-sends the favourite it has: no stamp',
      seller,
      { isFavorite: true, markedFavoriteAt: at },
      { isFavorite: true },
      { isFavorite: true },
    ],
    ['the seller follows for the buyer', seller, {}, { isFollower: true }, { ...forbidden, path: 'isFollower' }],
    [
      'the seller unfollows for the buyer',
      seller,
      { isFollower: true },
      { followStatus: 'NotFollowing' },
      { ...forbidden, path: 'isFollower' },
    ],
    [
      'the seller sends back the following it read: not written',
      seller,
      { isFollower: true },
      { isFollower: true, notes: 'x' },
      { notes: 'x' },
    ],
    ['the buyer follows: stamped', buyer, {}, { isFollower: true }, { isFollower: true, followStatus: 'Following', followedAt: now }],
    [
      'the buyer unfollows: cleared',
      buyer,
      { isFollower: true, followedAt: at },
      { followStatus: 'NotFollowing' },
      { isFollower: false, followStatus: 'NotFollowing', followedAt: null },
    ],
    ['the buyer changes another field', buyer, {}, { notes: 'x' }, forbidden],
    ['an admin sets following', admin, {}, { followStatus: 'Following' }, { isFollower: true, followStatus: 'Following', followedAt: now }],
    ['a rival seller', rival, {}, { notes: 'x' }, forbidden],
    ['another buyer', other, {}, { isFollower: true }, forbidden],
    [
      'following fields disagreeing',
      buyer,
      {},
      { isFollower: true, followStatus: 'NotFollowing' },
      { status: 422, code: 'invalid', path: 'followStatus' },
    ],
  ];
  test.each(cases)('%s', (_name, who, stored, fields, expected) => {
    let set: unknown;
    const result = outcome(() => (set = decideUpdate(who, relationship(stored), UpdateCustomerBody.parse(fields), now)));
    if (expected === 'ok' || !('status' in expected && 'code' in expected)) expect(set).toEqual(expected);
    else expect(result).toEqual(expected);
  });
});

describe('delete: its seller, an admin, or the buyer it names', () => {
  test.each<[string, AuthenticatedUser, Outcome]>([
    ['its seller', seller, 'ok'],
    ['its buyer', buyer, 'ok'],
    ['an admin', admin, 'ok'],
    ['a rival seller', rival, forbidden],
    ['another buyer', other, forbidden],
  ])('%s', (_name, who, expected) => expect(outcome(() => assertDeleter(who, relationship()))).toEqual(expected));
});

describe("listings: only your own (an admin anyone's)", () => {
  test.each<[string, AuthenticatedUser, string, Outcome | string | null]>([
    ['own id', seller, seller.id, seller.id],
    ['own reference', buyer, buyer.ref, buyer.id],
    ["someone else's", seller, rival.id, { status: 403, code: 'forbidden' }],
    ["an admin, anyone's (looked up)", admin, rival.ref, null],
  ])('%s', (_name, who, key, expected) => {
    let owner: string | null | undefined;
    const result = outcome(() => (owner = listingOwner(who, key)));
    if (typeof expected === 'string' || expected === null) expect(owner).toBe(expected);
    else expect(result).toEqual(expected);
  });

  test.each<[string, AuthenticatedUser, object]>([
    ['an admin: all', admin, {}],
    ['a buyer: their relationships', buyer, { buyerId: buyer.id }],
    ['a seller: their customers', seller, { sellerId: seller.id }],
  ])('GET /customers, %s', (_name, who, scope) => expect(ownScope(who)).toEqual(scope));
});

describe('an admin’s delete of a relationship records its audit entry', () => {
  const context = { requestId: 'req-3', clientAddress: null };

  test('guarded by the updatedAt read, with what the relationship was before and nothing after', () => {
    const current = relationship({ notes: 'met at the fair' });
    const deletion = relationshipDeletion(admin, current, context, now);
    expect(deletion.guard).toEqual({ updatedAt: current.updatedAt });
    expect(deletion.entry).toMatchObject({
      type: 'crm.admin_action.recorded',
      source: 'crm',
      data: {
        action: 'customer.delete',
        actorId: admin.id,
        targetType: 'customer',
        targetId: current._id,
        requestId: 'req-3',
        before: expect.objectContaining({ sellerId: seller.id, buyerId: buyer.id, notes: 'met at the fair' }),
        after: null,
      },
    });
  });

  test.each([
    ['its seller', seller],
    ['its buyer', buyer],
  ])('%s’s own delete is plain: no guard, nothing recorded', (_name, who) =>
    expect(relationshipDeletion(who, relationship(), context, now)).toEqual({ guard: {}, entry: null }),
  );
});
