import { ENDPOINTS } from '@mkt/contracts';
import { call } from '@mkt/infra';
import {
  apiOf,
  book,
  dayFromNow,
  fund,
  loginAdmin,
  nearSlots,
  zoneAwayFromMidnight,
  offerConsultation,
  offerSoonSlot,
  register,
  slotsOf,
  type Offer,
  type Session,
  type Slot,
  waitFor,
  waitForSlotStart,
} from './fixtures';
import { startSystem, type System } from './system';

// Every endpoint of the public API × every kind of caller, with the status ADR 0003 says each
// gets. The rows are keyed by the contracts' endpoint table (the source of the OpenAPI
// document), so a route added without a row here fails the first test.

const PERSONAS = ['anonymous', 'buyer', 'otherBuyer', 'seller', 'otherSeller', 'admin'] as const;
type Persona = (typeof PERSONAS)[number];
type Statuses = Record<Persona, number>;

/** Statuses in the order anonymous, buyer, other buyer, seller, other seller, admin. */
const s = (...statuses: [number, number, number, number, number, number]): Statuses =>
  Object.fromEntries(PERSONAS.map((persona, i) => [persona, statuses[i]!])) as Statuses;
const EVERYONE = (status: number) => s(status, status, status, status, status, status);
const SIGNED_IN = s(401, 200, 200, 200, 200, 200);
/** The buyer's record: theirs and the admin's. */
const BUYERS_OWN = s(401, 200, 403, 403, 403, 200);
/** The seller's record: theirs and the admin's. */
const SELLERS_OWN = s(401, 403, 403, 200, 403, 200);
/** Sellers (and admins) only: buyers cannot create shops, products or consultation set-up. */
const SELLERS_ONLY = s(401, 403, 403, 200, 200, 200);
const ADMIN_ONLY = s(401, 403, 403, 403, 403, 200);

interface World {
  system: System;
  users: Record<Exclude<Persona, 'anonymous'>, Session>;
  recipient: Session;
  /** A third buyer who booked with the seller: the one a seller may name in `POST /customers`. */
  customer: Session;
  offer: Offer;
  reviewOffer: Offer;
  setups: Record<'seller' | 'otherSeller' | 'admin', { ruleSetId: string; pricingId: string }>;
  bookingId: string;
  topUp: { ref: string; token: string };
  payoutRef: string;
  productRef: string;
  draftRef: string;
  shopId: string;
  v1ProductId: string;
  couponCode: string;
  relationshipId: string;
  reviewId: string;
  bank: { code: string; length: number };
  nextSlot: () => Slot;
  /** A slot starting soon (sessions start at the earliest 15 minutes before), of some consultation. */
  nextNear: () => { offer: Offer; slot: Slot };
  /** Started sessions whose slot has begun (a session ends only then), made before the tests. */
  endable: string[];
  shared: Map<string, Promise<string>>;
}

interface Request {
  path: string;
  body?: unknown;
  form?: Record<string, string>;
}

type Row = { expect: Statuses; request: (world: World, as: Persona) => Promise<Request> | Request };

const unique = () => Math.random().toString(36).slice(2, 10);
const product = () => ({
  name: `Coffee ${unique()}`,
  description: 'Washed',
  sellingPrice: 10,
  stock: 5,
  shippingHandler: 'Seller',
  categoryId: 'MKT-CAT-GROCERY0',
  properties: [{ propertyId: 'MKT-PRO-GRORGANC', value: true }],
});
const ok = (res: { status: number; body: unknown }, what: string) => {
  if (res.status !== 200) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { data: Record<string, string> }).data;
};

async function newTopUp(w: World): Promise<{ ref: string; token: string }> {
  const buyer = w.users.buyer;
  const data = ok(
    await apiOf(w.system, buyer)('POST', `/wallets/users/${buyer.ref}/topup`, {
      amount: 10,
      paymentMethod: 'Chapa',
      redirectUrl: 'http://localhost:3000/done',
    }),
    'top-up',
  );
  const url = new URL(data.paymentUrl!);
  return { ref: url.pathname.split('/').pop()!, token: url.searchParams.get('token')! };
}

/** The buyer's top-up paid on the sandbox checkout (through the gateway): one with a receipt, made once. */
function paidTopUp(w: World): Promise<string> {
  if (!w.shared.has('paidTopUp'))
    w.shared.set(
      'paidTopUp',
      newTopUp(w).then(async ({ ref, token }) => {
        const paid = await fetch(`${w.system.gateway}/wallets/checkout/${ref}/pay`, {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token }).toString(),
        });
        await paid.arrayBuffer();
        if (paid.status !== 303) throw new Error(`pay: ${paid.status}`);
        return ref;
      }),
    );
  return w.shared.get('paidTopUp')!;
}

const payoutBody = (w: World) => ({
  amount: '10.00',
  bankCode: w.bank.code,
  accountNumber: '1'.repeat(w.bank.length),
  accountName: 'A buyer',
  reason: 'Withdrawal',
});

async function newPayout(w: World, state: 'Pending' | 'Approved' | 'Processing'): Promise<string> {
  const buyer = w.users.buyer;
  const ref = ok(await apiOf(w.system, buyer)('POST', `/wallets/users/${buyer.ref}/payout-request`, payoutBody(w)), 'payout').referenceId!;
  const admin = apiOf(w.system, w.users.admin);
  if (state !== 'Pending') ok(await admin('POST', `/wallets/payout-requests/${ref}/approve`, {}), 'approve');
  if (state === 'Processing') ok(await admin('POST', `/wallets/payout-requests/${ref}/process`, {}), 'process');
  return ref;
}

async function newBooking(w: World): Promise<{ bookingId: string; sessionId: string }> {
  const data = ok(await book(w.system, w.users.buyer, w.offer, w.nextSlot()), 'booking');
  return { bookingId: data.bookingId!, sessionId: data.sessionId! };
}

/** A session of a soon-starting slot booked by the buyer; `shared` ones serve every caller that must be refused. */
async function newSession(w: World, started: boolean, shared?: string): Promise<string> {
  if (shared) {
    if (!w.shared.has(shared)) w.shared.set(shared, newSession(w, started));
    return w.shared.get(shared)!;
  }
  const { offer, slot } = w.nextNear();
  const { sessionId } = ok(await book(w.system, w.users.buyer, offer, slot), 'booking') as { sessionId: string };
  if (started) ok(await apiOf(w.system, w.users.seller)('POST', `/consultations/sessions/${sessionId}/start`, {}), 'start');
  return sessionId;
}
/** A started session whose slot has begun, for `end`; `shared` as in newSession. */
async function endableSession(w: World, shared?: string): Promise<string> {
  if (shared) {
    if (!w.shared.has(shared)) w.shared.set(shared, endableSession(w));
    return w.shared.get(shared)!;
  }
  return w.endable.shift()!;
}
const mayMove = (as: Persona) => as === 'seller' || as === 'admin';

/**
 * The relationship of the seller and its customer (who booked with it): the one the booking
 * opened or an earlier call made while it is there, else made again by the seller (a seller may
 * name only a buyer who booked with it).
 */
async function newRelationship(w: World): Promise<string> {
  const seller = w.users.seller;
  const sellerApi = apiOf(w.system, seller);
  const created = await sellerApi('POST', '/customers', { sellerId: seller.id, buyerId: w.customer.id });
  if (created.status === 200) return ok(created, 'relationship').id!;
  const listed = await sellerApi('GET', `/customers/seller/${seller.id}?limit=100`);
  return (listed.body.data.customers as Array<{ id: string; buyerId: string }>).find((row) => row.buyerId === w.customer.id)!.id;
}

async function newConsultation(w: World): Promise<string> {
  const { ruleSetId, pricingId } = w.setups.seller;
  return ok(await apiOf(w.system, w.users.seller)('POST', '/consultations', consultationBody(ruleSetId, pricingId)), 'consultation').id!;
}

const consultationBody = (ruleSetId: string, pricingId: string) => ({
  title: `Advice ${unique()}`,
  duration: 30,
  sessionType: 'OneToOne',
  deliveryMode: 'Online',
  timezone: 'Africa/Addis_Ababa',
  language: 'English',
  category: 'Business',
  ruleSetId,
  pricingId,
});

const period = () => ({
  validFrom: new Date(Date.now() - 86_400_000).toISOString(),
  validTo: new Date(Date.now() + 30 * 86_400_000).toISOString(),
});
const setupOf = (w: World, as: Persona) => w.setups[as === 'otherSeller' || as === 'admin' ? as : 'seller'];
const userOf = (w: World, as: Persona) => (as === 'anonymous' ? null : w.users[as]);
const payoutMove = (move: string, state: 'Pending' | 'Approved' | 'Processing'): Row => ({
  expect: ADMIN_ONLY,
  request: async (w) => ({ path: `/wallets/payout-requests/${await newPayout(w, state)}/${move}`, body: { adminNotes: 'Checked' } }),
});

/** One row per endpoint of the contracts' table, keyed `METHOD path`. */
const MATRIX: Record<string, Row> = {
  'POST /v1/auth/register': {
    expect: EVERYONE(200),
    request: () => ({
      path: '/v1/auth/register',
      body: { email: `new-${unique()}@example.com`, password: 'a long password', fullName: 'New User', role: 'buyer' },
    }),
  },
  'POST /v1/auth/login': {
    expect: EVERYONE(200),
    request: (w) => ({ path: '/v1/auth/login', body: { email: w.users.buyer.email, password: 'a long password' } }),
  },
  'POST /v1/auth/refresh': {
    expect: EVERYONE(200),
    request: async (w) => ({ path: '/v1/auth/refresh', body: { refreshToken: await freshRefreshToken(w) } }),
  },
  'POST /v1/auth/logout': {
    expect: EVERYONE(200),
    request: async (w) => ({ path: '/v1/auth/logout', body: { refreshToken: await freshRefreshToken(w) } }),
  },
  'GET /v1/auth/me': { expect: SIGNED_IN, request: () => ({ path: '/v1/auth/me' }) },
  'GET /v1/auth/.well-known/jwks.json': { expect: EVERYONE(200), request: () => ({ path: '/v1/auth/.well-known/jwks.json' }) },

  'POST /wallets/users/{userReferenceId}/topup': {
    expect: BUYERS_OWN,
    request: (w) => ({
      path: `/wallets/users/${w.users.buyer.ref}/topup`,
      body: { amount: 10, paymentMethod: 'Chapa', redirectUrl: 'http://localhost:3000/done' },
    }),
  },
  'GET /wallets/topup/{walletReferenceId}/status': {
    expect: BUYERS_OWN,
    request: (w) => ({ path: `/wallets/topup/${w.topUp.ref}/status` }),
  },
  // A completed top-up's receipt: its owner's and the admins'; to anyone else it does not exist.
  'GET /v1/wallet/topups/{walletReferenceId}/receipt': {
    expect: s(401, 200, 404, 404, 404, 200),
    request: async (w) => ({ path: `/v1/wallet/topups/${await paidTopUp(w)}/receipt` }),
  },
  'GET /v1/wallet/topups/{walletReferenceId}/receipt.html': {
    expect: s(401, 200, 404, 404, 404, 200),
    request: async (w) => ({ path: `/v1/wallet/topups/${await paidTopUp(w)}/receipt.html` }),
  },
  // Only a payout's owner requests it: not even an admin for someone else.
  'POST /wallets/users/{userReferenceId}/payout-request': {
    expect: s(401, 200, 403, 403, 403, 403),
    request: (w) => ({ path: `/wallets/users/${w.users.buyer.ref}/payout-request`, body: payoutBody(w) }),
  },
  'GET /wallets/payout-requests/{referenceId}/status': {
    expect: BUYERS_OWN,
    request: (w) => ({ path: `/wallets/payout-requests/${w.payoutRef}/status` }),
  },
  'POST /wallets/payout-requests/{referenceId}/cancel': {
    expect: BUYERS_OWN,
    request: async (w) => ({ path: `/wallets/payout-requests/${await newPayout(w, 'Pending')}/cancel`, body: {} }),
  },
  'POST /wallets/payout-requests/{referenceId}/approve': payoutMove('approve', 'Pending'),
  'POST /wallets/payout-requests/{referenceId}/reject': payoutMove('reject', 'Pending'),
  'POST /wallets/payout-requests/{referenceId}/process': payoutMove('process', 'Approved'),
  'POST /wallets/payout-requests/{referenceId}/complete': payoutMove('complete', 'Processing'),
  'POST /wallets/payout-requests/{referenceId}/fail': payoutMove('fail', 'Processing'),
  // A paid booking's hold: read and voided by hand by an admin only.
  'GET /wallets/booking-holds/{bookingId}': {
    expect: ADMIN_ONLY,
    request: (w) => ({ path: `/wallets/booking-holds/${w.bookingId}` }),
  },
  'POST /wallets/booking-holds/{bookingId}/void': {
    expect: ADMIN_ONLY,
    request: async (w) => ({ path: `/wallets/booking-holds/${(await newBooking(w)).bookingId}/void`, body: { reason: 'Matrix' } }),
  },
  // The admin gets past the authorization to the state rule (409: the hold is not disputed).
  // The admins' queues and the audit log: admins alone, anyone else 403 before anything is read.
  'GET /wallets/admin/payout-requests': { expect: ADMIN_ONLY, request: () => ({ path: '/wallets/admin/payout-requests' }) },
  'GET /wallets/admin/booking-holds': { expect: ADMIN_ONLY, request: () => ({ path: '/wallets/admin/booking-holds' }) },
  'GET /consultations/admin/approvals': { expect: ADMIN_ONLY, request: () => ({ path: '/consultations/admin/approvals' }) },
  'GET /v1/admin/audit-log': { expect: ADMIN_ONLY, request: () => ({ path: '/v1/admin/audit-log' }) },
  'GET /v1/admin/audit-log/export': { expect: ADMIN_ONLY, request: () => ({ path: '/v1/admin/audit-log/export' }) },
  'POST /wallets/booking-holds/{bookingId}/uphold': {
    expect: s(401, 403, 403, 403, 403, 409),
    request: (w) => ({ path: `/wallets/booking-holds/${w.bookingId}/uphold`, body: { reason: 'Matrix' } }),
  },
  'GET /wallets/rate-limit/stats': { expect: SIGNED_IN, request: () => ({ path: '/wallets/rate-limit/stats' }) },
  'GET /wallets/banks': { expect: SIGNED_IN, request: () => ({ path: '/wallets/banks' }) },
  // The hosted checkout answers whoever holds the link's token.
  'GET /wallets/checkout/{walletReferenceId}': {
    expect: EVERYONE(200),
    request: (w) => ({ path: `/wallets/checkout/${w.topUp.ref}?token=${w.topUp.token}` }),
  },
  'POST /wallets/checkout/{walletReferenceId}/pay': {
    expect: EVERYONE(303),
    request: async (w) => {
      const topUp = await newTopUp(w);
      return { path: `/wallets/checkout/${topUp.ref}/pay`, form: { token: topUp.token } };
    },
  },
  'POST /wallets/checkout/{walletReferenceId}/cancel': {
    expect: EVERYONE(303),
    request: async (w) => {
      const topUp = await newTopUp(w);
      return { path: `/wallets/checkout/${topUp.ref}/cancel`, form: { token: topUp.token } };
    },
  },
  // Without the provider's return token nobody learns anything of a top-up, whoever asks.
  'GET /wallets/checkout/{walletReferenceId}/return': {
    expect: EVERYONE(404),
    request: (w) => ({ path: `/wallets/checkout/${w.topUp.ref}/return` }),
  },
  // Only the provider's signature counts, never a bearer token (and the sandbox has none).
  'POST /wallets/webhooks/chapa': { expect: EVERYONE(401), request: () => ({ path: '/wallets/webhooks/chapa', body: { tx_ref: 'x' } }) },
  'GET /v1/wallet': { expect: SIGNED_IN, request: () => ({ path: '/v1/wallet' }) },
  'POST /v1/wallet/transfers': {
    expect: SIGNED_IN,
    request: (w) => ({ path: '/v1/wallet/transfers', body: { toUserId: w.recipient.id, amount: 1_00, currency: 'ETB' } }),
  },
  // The caller's money: each reads only the caller's own records (keyed by their user id), so
  // every signed-in caller gets 200 with their own, and there is no one else's to name.
  'GET /v1/wallet/transactions': { expect: SIGNED_IN, request: () => ({ path: '/v1/wallet/transactions?limit=5' }) },
  'GET /v1/wallet/transactions.csv': { expect: SIGNED_IN, request: () => ({ path: '/v1/wallet/transactions.csv' }) },
  'GET /v1/wallet/earnings': { expect: SIGNED_IN, request: () => ({ path: '/v1/wallet/earnings' }) },
  'GET /v1/wallet/topups': { expect: SIGNED_IN, request: () => ({ path: '/v1/wallet/topups' }) },
  'GET /v1/wallet/payouts': { expect: SIGNED_IN, request: () => ({ path: '/v1/wallet/payouts' }) },
  'GET /v1/wallet/transfers': { expect: SIGNED_IN, request: () => ({ path: '/v1/wallet/transfers?direction=all' }) },

  'GET /physical-products/categories': { expect: EVERYONE(200), request: () => ({ path: '/physical-products/categories' }) },
  'POST /physical-products/seller-products/': {
    expect: SELLERS_ONLY,
    request: () => ({ path: '/physical-products/seller-products/', body: product() }),
  },
  'GET /physical-products/seller-products/': { expect: EVERYONE(200), request: () => ({ path: '/physical-products/seller-products/' }) },
  'GET /physical-products/seller-products/my': { expect: SIGNED_IN, request: () => ({ path: '/physical-products/seller-products/my' }) },
  'GET /physical-products/seller-products/{referenceId}': {
    expect: EVERYONE(200),
    request: (w) => ({ path: `/physical-products/seller-products/${w.productRef}` }),
  },
  'PATCH /physical-products/seller-products/{referenceId}': {
    expect: SELLERS_OWN,
    request: (w) => ({ path: `/physical-products/seller-products/${w.productRef}`, body: { stock: 7 } }),
  },
  'PATCH /physical-products/seller-products/{referenceId}/visibility': {
    expect: SELLERS_OWN,
    request: (w) => ({ path: `/physical-products/seller-products/${w.productRef}/visibility`, body: { visibility: 'Public' } }),
  },
  'DELETE /physical-products/seller-products/{referenceId}': {
    expect: SELLERS_OWN,
    request: async (w) => {
      const created = ok(await apiOf(w.system, w.users.seller)('POST', '/physical-products/seller-products/', product()), 'product');
      return { path: `/physical-products/seller-products/${created.referenceId ?? created.id}` };
    },
  },
  'POST /physical-products/seller-products/draft': {
    expect: SELLERS_ONLY,
    request: () => ({
      path: '/physical-products/seller-products/draft',
      body: { categoryId: 'MKT-CAT-GROCERY0', metaData: { form: '{"name":"Draft"}' } },
    }),
  },
  // A draft is seen by its seller only: to anyone else it does not exist (404, ADR 0003).
  'PATCH /physical-products/seller-products/draft/{referenceId}': {
    expect: s(401, 404, 404, 200, 404, 200),
    request: (w) => ({ path: `/physical-products/seller-products/draft/${w.draftRef}`, body: { metaData: { form: '{"name":"Edited"}' } } }),
  },
  'POST /v1/shops': {
    expect: SELLERS_ONLY,
    request: () => ({ path: '/v1/shops', body: { name: 'Shop', slug: `shop-${unique()}`, country: 'ET', category: 'Coffee' } }),
  },
  'GET /v1/shops/{shopId}': { expect: SIGNED_IN, request: (w) => ({ path: `/v1/shops/${w.shopId}` }) },
  'POST /v1/products': {
    expect: SELLERS_ONLY,
    request: () => ({
      path: '/v1/products',
      body: { title: 'Beans', price: 1_000, currency: 'ETB', sku: `SKU-${unique()}`, inventory: 3 },
    }),
  },
  'GET /v1/products/{productId}': { expect: SIGNED_IN, request: (w) => ({ path: `/v1/products/${w.v1ProductId}` }) },
  'GET /v1/products': { expect: SIGNED_IN, request: () => ({ path: '/v1/products' }) },

  // A relationship is created by its seller, for itself (or by an admin), naming a buyer who
  // booked with it: the customer's, removed first so that a create may make it again.
  'POST /customers': {
    expect: SELLERS_OWN,
    request: async (w) => {
      ok(await apiOf(w.system, w.users.seller)('DELETE', `/customers/${await newRelationship(w)}`), 'relationship removed');
      return { path: '/customers', body: { sellerId: w.users.seller.id, buyerId: w.customer.id } };
    },
  },
  'GET /customers': { expect: SIGNED_IN, request: () => ({ path: '/customers' }) },
  // Both sides of a relationship may read it; only its seller changes it.
  'GET /customers/{id}': { expect: s(401, 200, 403, 200, 403, 200), request: (w) => ({ path: `/customers/${w.relationshipId}` }) },
  'PUT /customers/{id}': { expect: SELLERS_OWN, request: (w) => ({ path: `/customers/${w.relationshipId}`, body: { isFavorite: true } }) },
  'DELETE /customers/{id}': { expect: SELLERS_OWN, request: async (w) => ({ path: `/customers/${await newRelationship(w)}` }) },
  'GET /customers/seller/{sellerId}': { expect: SELLERS_OWN, request: (w) => ({ path: `/customers/seller/${w.users.seller.id}` }) },
  'GET /customers/seller/{sellerId}/followers': {
    expect: SELLERS_OWN,
    request: (w) => ({ path: `/customers/seller/${w.users.seller.id}/followers` }),
  },
  'GET /customers/seller/{sellerId}/favorites': {
    expect: SELLERS_OWN,
    request: (w) => ({ path: `/customers/seller/${w.users.seller.id}/favorites` }),
  },
  'GET /customers/seller/{sellerId}/high-value': {
    expect: SELLERS_OWN,
    request: (w) => ({ path: `/customers/seller/${w.users.seller.id}/high-value` }),
  },
  'GET /customers/seller/{sellerId}/analytics': {
    expect: SELLERS_OWN,
    request: (w) => ({ path: `/customers/seller/${w.users.seller.id}/analytics` }),
  },
  'GET /customers/buyer/{buyerId}': { expect: BUYERS_OWN, request: (w) => ({ path: `/customers/buyer/${w.users.buyer.id}` }) },
  'GET /customers/buyer/{buyerId}/following': {
    expect: BUYERS_OWN,
    request: (w) => ({ path: `/customers/buyer/${w.users.buyer.id}/following` }),
  },
  'GET /customers/buyer/{buyerId}/customers': {
    expect: BUYERS_OWN,
    request: (w) => ({ path: `/customers/buyer/${w.users.buyer.id}/customers` }),
  },

  'POST /consultations': {
    expect: SELLERS_ONLY,
    request: (w, as) => {
      const { ruleSetId, pricingId } = setupOf(w, as);
      return { path: '/consultations', body: consultationBody(ruleSetId, pricingId) };
    },
  },
  'GET /consultations': { expect: EVERYONE(200), request: () => ({ path: '/consultations' }) },
  'GET /consultations/{id}': { expect: EVERYONE(200), request: (w) => ({ path: `/consultations/${w.offer.id}` }) },
  'PUT /consultations/{id}': {
    expect: SELLERS_OWN,
    request: (w) => ({ path: `/consultations/${w.offer.id}`, body: { description: 'Updated' } }),
  },
  'POST /consultations/{id}/approve': {
    expect: ADMIN_ONLY,
    // A new consultation is at version 1: the admin approves that version.
    request: async (w) => ({ path: `/consultations/${await newConsultation(w)}/approve`, body: { version: 1 } }),
  },
  'GET /consultations/{id}/slots': {
    expect: EVERYONE(200),
    request: (w) => ({ path: `/consultations/${w.offer.id}/slots?from=${dayFromNow(30)}&to=${dayFromNow(30)}` }),
  },
  'GET /consultations/sessions': { expect: SIGNED_IN, request: () => ({ path: '/consultations/sessions' }) },
  'POST /consultations/sessions/{id}/start': {
    expect: SELLERS_OWN,
    request: async (w, as) => ({
      path: `/consultations/sessions/${await newSession(w, false, mayMove(as) ? undefined : 'start')}/start`,
      body: {},
    }),
  },
  'POST /consultations/sessions/{id}/end': {
    expect: SELLERS_OWN,
    request: async (w, as) => ({
      path: `/consultations/sessions/${await endableSession(w, mayMove(as) ? undefined : 'end')}/end`,
      body: { sessionSummary: 'Done' },
    }),
  },
  // A no-show needs the slot's grace to have passed, and a slot cannot be booked once it has begun:
  // the owner (and the admin) get past the authorization to the time rule (422), everyone else is refused.
  'POST /consultations/sessions/{id}/no-show': {
    expect: s(401, 403, 403, 422, 403, 422),
    request: async (w) => ({ path: `/consultations/sessions/${await newSession(w, false, 'no-show')}/no-show`, body: { notes: 'Absent' } }),
  },
  // Only a buyer booked on the session disputes it; the buyer gets past that to the state rule
  // (409: the session is not marked no-show), everyone else (its seller and admins too) is refused.
  'POST /consultations/sessions/{id}/dispute': {
    expect: s(401, 409, 403, 403, 403, 403),
    request: async (w) => ({
      path: `/consultations/sessions/${await newSession(w, false, 'dispute')}/dispute`,
      body: { reason: 'Absent' },
    }),
  },
  // Anyone signed in books another seller's consultation; a seller never books their own.
  'POST /consultations/bookings': {
    expect: s(401, 200, 200, 403, 200, 200),
    request: (w, as) => {
      const slot = w.nextSlot();
      const user = userOf(w, as);
      return {
        path: '/consultations/bookings',
        body: {
          SellerId: w.offer.sellerId,
          consultationId: w.offer.id,
          ruleSetId: w.offer.ruleSetId,
          ...slot,
          participants: [{ fullName: 'Guest', email: user?.email ?? 'guest@example.com', phone: '+251911223344' }],
          subTotal: w.offer.priceMajor,
          totalAmount: w.offer.priceMajor,
          currency: 'ETB',
        },
      };
    },
  },
  'GET /consultations/bookings': { expect: SIGNED_IN, request: () => ({ path: '/consultations/bookings' }) },
  // A booking is known to its buyer and its seller only: to anyone else it does not exist.
  'GET /consultations/bookings/{id}': {
    expect: s(401, 200, 404, 200, 404, 200),
    request: (w) => ({ path: `/consultations/bookings/${w.bookingId}` }),
  },
  // A booking's receipt, as the booking itself: its buyer, its seller and the admins.
  'GET /consultations/bookings/{id}/receipt': {
    expect: s(401, 200, 404, 200, 404, 200),
    request: (w) => ({ path: `/consultations/bookings/${w.bookingId}/receipt` }),
  },
  'GET /consultations/bookings/{id}/receipt.html': {
    expect: s(401, 200, 404, 200, 404, 200),
    request: (w) => ({ path: `/consultations/bookings/${w.bookingId}/receipt.html` }),
  },
  // Its buyer or its seller cancels a booking (or an admin).
  'POST /consultations/bookings/cancel': {
    expect: s(401, 200, 403, 200, 403, 200),
    request: async (w) => ({
      path: '/consultations/bookings/cancel',
      body: { bookingId: (await newBooking(w)).bookingId, refundAmount: 1 },
    }),
  },
  'POST /consultations/availability-rule-sets/rule-sets': {
    expect: SELLERS_ONLY,
    request: () => ({
      path: '/consultations/availability-rule-sets/rule-sets',
      body: {
        name: 'Mornings',
        timezone: 'Africa/Addis_Ababa',
        availabilityRules: [{ type: 'weekly', weekday: 'monday', intervals: [{ start_time: '09:00:00', end_time: '12:00:00' }] }],
      },
    }),
  },
  'GET /consultations/availability-rule-sets/rule-sets': {
    expect: SIGNED_IN,
    request: () => ({ path: '/consultations/availability-rule-sets/rule-sets' }),
  },
  'GET /consultations/availability-rule-sets/rule-sets/{id}': {
    expect: SELLERS_OWN,
    request: (w) => ({ path: `/consultations/availability-rule-sets/rule-sets/${w.offer.ruleSetId}` }),
  },
  'POST /consultations/pricing': {
    expect: SELLERS_ONLY,
    request: () => ({ path: '/consultations/pricing', body: { basePrice: 20, currency: 'ETB' } }),
  },
  'POST /consultations/pricing/promotional-discounts': {
    expect: SELLERS_ONLY,
    request: () => ({
      path: '/consultations/pricing/promotional-discounts',
      body: {
        name: 'Launch',
        discountType: 'Percentage',
        discountValue: 10,
        couponCode: `C${unique()}`.toUpperCase(),
        maxUses: 5,
        ...period(),
      },
    }),
  },
  'POST /consultations/pricing/promotional-discounts/validate-coupon': {
    expect: SIGNED_IN,
    request: (w) => ({
      path: '/consultations/pricing/promotional-discounts/validate-coupon',
      body: { couponCode: w.couponCode, consultationId: w.offer.id },
    }),
  },
  'POST /consultations/visibility/rule-sets': {
    expect: SELLERS_ONLY,
    request: () => ({
      path: '/consultations/visibility/rule-sets',
      body: { name: 'Everyone', visibilityRules: [{ type: 'user_type', condition: 'buyer', action: 'show', priority: 1 }], ...period() },
    }),
  },
  'POST /consultations/visibility/status': {
    expect: SIGNED_IN,
    request: (w) => ({ path: '/consultations/visibility/status', body: { consultationIds: [w.offer.id] } }),
  },

  // Only a buyer with a completed session reviews; everyone else is not eligible.
  'POST /reviews': {
    expect: s(401, 200, 422, 422, 422, 422),
    request: (w) => ({ path: '/reviews', body: { entityType: 'consultation_service', entityId: w.reviewOffer.id, rating: 4 } }),
  },
  'GET /reviews/by-entity': {
    expect: EVERYONE(200),
    request: (w) => ({ path: `/reviews/by-entity?entityType=consultation_service&entityId=${w.offer.id}` }),
  },
  'GET /reviews/consultation/{id}/status': { expect: SIGNED_IN, request: (w) => ({ path: `/reviews/consultation/${w.offer.id}/status` }) },
  'PATCH /reviews/{id}': { expect: BUYERS_OWN, request: (w) => ({ path: `/reviews/${w.reviewId}`, body: { isActive: false } }) },
};

async function freshRefreshToken(w: World): Promise<string> {
  return ok(await apiOf(w.system)('POST', '/v1/auth/login', { email: w.users.buyer.email, password: 'a long password' }), 'login')
    .refreshToken!;
}

let world: World;
beforeAll(async () => {
  const system = await startSystem({ envOf: { wallet: { LIMIT_DAILY: '1000', LIMIT_WEEKLY: '1000', LIMIT_MONTHLY: '1000' } } });
  try {
    const admin = await loginAdmin(system);
    const [buyer, otherBuyer, seller, otherSeller, recipient, customer] = await Promise.all([
      register(system, 'buyer', 'Buyer'),
      register(system, 'buyer', 'Other Buyer'),
      register(system, 'seller', 'Seller'),
      register(system, 'seller', 'Other Seller'),
      register(system, 'buyer', 'Recipient'),
      register(system, 'buyer', 'Customer'),
    ]);
    await fund(system, [buyer, otherBuyer, seller, otherSeller, admin, customer], 2_000);
    // Sessions end only once their slot has begun: five consultations whose one slot begins within
    // a minute or two are booked and started first, and the rest of the set-up runs while their
    // slots come. The first two are then ended (the buyer reviews the first and may review the
    // second); the other three are the sessions the `end` row ends.
    const sellerApi = apiOf(system, seller);
    const soonOffers = await Promise.all(
      [0, 1, 2, 3, 4].map(() => offerSoonSlot(system, seller, admin, { priceMajor: 10, leadSeconds: 45 })),
    );
    const startedSessions: string[] = [];
    for (const { offer: consultation, slot } of soonOffers) {
      const { sessionId } = ok(await book(system, buyer, consultation, slot), 'booking') as { sessionId: string };
      ok(await sellerApi('POST', `/consultations/sessions/${sessionId}/start`, {}), 'start');
      startedSessions.push(sessionId);
    }
    const [reviewedOffer, reviewOffer] = [soonOffers[0]!.offer, soonOffers[1]!.offer];
    const allDay = { priceMajor: 10, duration: 5, from: '00:00:00', to: '23:59:59' };
    // One for the rows' bookings, the rest for their near slots.
    // The near ones in a zone away from midnight: their slots of the next minutes fit the day.
    const nearZone = zoneAwayFromMidnight();
    const [offer, ...soon] = (await Promise.all(
      [0, 1, 2, 3, 4].map((i) => offerConsultation(system, seller, admin, i === 0 ? allDay : { ...allDay, timezone: nearZone })),
    )) as [Offer, ...Offer[]];
    // Near slots are picked when asked for: the set-up waits for slots to begin, which may pass the earliest.
    const usedNear = new Set<string>();
    const nextNear = () => {
      for (const o of soon)
        for (const slot of nearSlots(o)) {
          const key = `${o.id}|${slot.date}|${slot.startTime}`;
          if (usedNear.has(key)) continue;
          usedNear.add(key);
          return { offer: o, slot };
        }
      throw new Error('no near slot left');
    };
    const setup = async (user: Session) => {
      const api = apiOf(system, user);
      const ruleSet = ok(
        await api('POST', '/consultations/availability-rule-sets/rule-sets', {
          name: 'Weekdays',
          timezone: 'Africa/Addis_Ababa',
          availabilityRules: [{ type: 'weekly', weekday: 'monday', intervals: [{ start_time: '09:00:00', end_time: '12:00:00' }] }],
        }),
        'rule set',
      );
      const pricing = ok(await api('POST', '/consultations/pricing', { basePrice: 15, currency: 'ETB' }), 'pricing');
      return { ruleSetId: ruleSet.id!, pricingId: pricing.id! };
    };
    const slots = [10, 11].flatMap((days) => slotsOf(offer!, dayFromNow(days)));
    let slotIndex = 0;
    const partial: Omit<World, 'bookingId' | 'topUp' | 'payoutRef' | 'relationshipId' | 'reviewId'> = {
      system,
      users: { buyer, otherBuyer, seller, otherSeller, admin },
      recipient,
      customer,
      offer,
      reviewOffer,
      setups: { seller: await setup(seller), otherSeller: await setup(otherSeller), admin: await setup(admin) },
      productRef: '',
      draftRef: '',
      shopId: '',
      v1ProductId: '',
      couponCode: `SAVE${unique()}`.toUpperCase(),
      bank: { code: '', length: 0 },
      nextSlot: () => slots[slotIndex++]!,
      nextNear,
      endable: startedSessions.slice(2),
      shared: new Map(),
    };
    const w = partial as World;
    const banks = ok(await apiOf(system, buyer)('GET', '/wallets/banks'), 'banks') as unknown as Array<{
      code: string;
      account_length: number;
      is_active: boolean;
    }>;
    const bank = banks.find((b) => b.is_active) ?? banks[0]!;
    w.bank = { code: bank.code, length: bank.account_length };
    const created = ok(await sellerApi('POST', '/physical-products/seller-products/', product()), 'product');
    w.productRef = created.referenceId ?? created.id!;
    const draft = ok(
      await sellerApi('POST', '/physical-products/seller-products/draft', {
        categoryId: 'MKT-CAT-GROCERY0',
        metaData: { form: '{"name":"Draft"}' },
      }),
      'draft',
    );
    w.draftRef = draft.referenceId ?? draft.id!;
    w.shopId = ok(
      await sellerApi('POST', '/v1/shops', { name: 'Shop', slug: `shop-${unique()}`, country: 'ET', category: 'Coffee' }),
      'shop',
    ).id!;
    w.v1ProductId = ok(
      await sellerApi('POST', '/v1/products', { title: 'Beans', price: 1_000, currency: 'ETB', sku: `SKU-${unique()}`, inventory: 3 }),
      'v1 product',
    ).id!;
    ok(
      await sellerApi('POST', '/consultations/pricing/promotional-discounts', {
        name: 'Launch',
        discountType: 'Percentage',
        discountValue: 10,
        couponCode: w.couponCode,
        maxUses: 100,
        ...period(),
      }),
      'discount',
    );
    w.bookingId = (await newBooking(w)).bookingId;
    ok(await book(system, customer, offer, w.nextSlot()), 'the customer’s booking');
    // The bookings open the pairs' relationships in the CRM (a seller may name only a buyer who booked).
    const opened = await waitFor(
      'the CRM to open the pairs’ relationships',
      () => sellerApi('GET', `/customers/seller/${seller.id}?limit=100`),
      (res) => [buyer.id, customer.id].every((id) => res.body.data?.customers?.some((row: { buyerId: string }) => row.buyerId === id)),
    );
    w.relationshipId = (opened.body.data.customers as Array<{ id: string; buyerId: string }>).find((row) => row.buyerId === buyer.id)!.id;
    w.topUp = await newTopUp(w);
    w.payoutRef = await newPayout(w, 'Pending');
    await waitForSlotStart(new Date(Math.max(...soonOffers.map((soonOffer) => soonOffer.startsAt.getTime()))));
    for (const sessionId of startedSessions.slice(0, 2)) ok(await sellerApi('POST', `/consultations/sessions/${sessionId}/end`, {}), 'end');
    const buyerApi = apiOf(system, buyer);
    const eligible = (id: string) => () => buyerApi('GET', `/reviews/consultation/${id}/status`);
    await waitFor('the buyer to become eligible to review', eligible(reviewedOffer.id), (status) => status.body.data?.canReview === true);
    w.reviewId = ok(
      await buyerApi('POST', '/reviews', { entityType: 'consultation_service', entityId: reviewedOffer.id, rating: 5, comment: 'Good' }),
      'review',
    ).reviewId!;
    await waitFor(
      'the buyer to become eligible to review the second consultation',
      eligible(reviewOffer.id),
      (status) => status.body.data?.canReview === true,
    );
    world = w;
  } catch (err) {
    await system.stop();
    throw err;
  }
}, 240_000);
afterAll(() => world?.system.stop(), 60_000);

const keyOf = (method: string, path: string) => `${method.toUpperCase()} ${path}`;

test('the matrix has exactly one row for every route of the contracts’ endpoint table', () => {
  const routes = ENDPOINTS.map((endpoint) => keyOf(endpoint.method, endpoint.path)).sort();
  expect(Object.keys(MATRIX).sort()).toEqual(routes);
});

async function send(w: World, as: Persona, method: string, request: Request): Promise<number> {
  const token = as === 'anonymous' ? undefined : w.users[as].token;
  if (request.form) {
    const res = await fetch(`${w.system.gateway}${request.path}`, {
      method,
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: new URLSearchParams(request.form).toString(),
    });
    await res.arrayBuffer();
    return res.status;
  }
  const res = await call(w.system.gateway, method, request.path, {
    token,
    body: request.body ?? (method === 'GET' || method === 'DELETE' ? undefined : {}),
  });
  if (res.status === 302 || res.status === 303) return res.status;
  return res.status;
}

describe.each(Object.entries(MATRIX))('%s', (key, row) => {
  test('answers each caller as ADR 0003 says', async () => {
    const [method] = key.split(' ');
    const actual = {} as Statuses;
    for (const persona of PERSONAS) actual[persona] = await send(world, persona, method!, await row.request(world, persona));
    expect(actual).toEqual(row.expect);
  });
});

test('an admin cannot move a payout they requested themselves', async () => {
  const admin = world.users.admin;
  const api = apiOf(world.system, admin);
  const requested = await api('POST', `/wallets/users/${admin.ref}/payout-request`, payoutBody(world));
  expect(requested.status).toBe(200);
  const approve = await api('POST', `/wallets/payout-requests/${requested.body.data.referenceId}/approve`, {});
  expect(approve.status).toBe(403);
  expect(approve.body).toMatchObject({ success: false, errors: [{ code: 'forbidden' }] });
  expect((await api('GET', `/wallets/payout-requests/${requested.body.data.referenceId}/status`)).body.data.status).toBe('Pending');
});
