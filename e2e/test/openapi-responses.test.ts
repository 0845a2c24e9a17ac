import { ENDPOINTS, errorAnswers, successBodySchema, type Endpoint, type ErrorStatus } from '@mkt/contracts';
import { call, type JsonResponse } from '@mkt/infra';
import {
  book,
  dayFromNow,
  fund,
  loginAdmin,
  offerSoonSlot,
  register,
  slotsOf,
  waitForSlotStart,
  type Offer,
  type Session,
} from './fixtures';
import { eventually, startSystem, type System } from './system';

// Real answers of the running system, through the gateway, against the response schemas the
// OpenAPI document publishes (the contracts' endpoint table): one representative success of
// every operation. The schemas are strict, so a field a service adds without documenting it,
// or a documented one it leaves out, fails here.

/** Operations this flow cannot bring to a success, and why. */
const NOT_DRIVEN: Record<string, string> = {
  'GET /wallets/checkout/{walletReferenceId}/return': 'needs the return token that only the payment provider’s redirect carries',
  'POST /wallets/webhooks/chapa': 'needs a Chapa-signed body; the sandbox provider has no webhook',
  'POST /consultations/sessions/{id}/no-show': 'needs a slot that has begun, and a slot cannot be booked once it has',
  'POST /consultations/sessions/{id}/dispute': 'needs a session marked no-show (see the no-show)',
  'POST /wallets/booking-holds/{bookingId}/uphold': 'needs a hold whose no-show the buyer disputes (see the no-show)',
  'GET /wallets/admin/booking-holds':
    'lists only holds an hour past their slot or disputed (see the no-show); its answer is checked in services/wallet/test/admin-queues.test.ts',
};

const keyOf = (endpoint: Pick<Endpoint, 'method' | 'path'>) => `${endpoint.method.toUpperCase()} ${endpoint.path}`;
const answers = new Map<string, JsonResponse>();
let system: System;
/** Who the flows ran as and what they made, for the refusals below. */
/** Who the refusals are sent as; `delivered` is the consultation whose session the buyer completed (and reviewed). */
let parties: { admin: Session; seller: Session; buyer: Session; offer: Offer; delivered: Offer };

/** The schema of a whole success body of an operation, as the OpenAPI document describes it. */
const bodySchema = (endpoint: Endpoint) => successBodySchema(endpoint)!;

function endpointOf(method: string, template: string): Endpoint {
  const endpoint = ENDPOINTS.find((candidate) => candidate.method === method.toLowerCase() && candidate.path === template);
  if (!endpoint) throw new Error(`no ${method} ${template} in the endpoint table`);
  return endpoint;
}

/** Calls an operation (`template` names it in the table), keeps the answer, and returns it. */
async function drive(
  session: Pick<Session, 'token'> | null,
  method: string,
  template: string,
  path: string,
  body?: unknown,
): Promise<JsonResponse> {
  const endpoint = endpointOf(method, template);
  const res = await call(system.gateway, method, path, { token: session?.token, body });
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  answers.set(keyOf(endpoint), res);
  return res;
}

/** The sandbox checkout's form posts answer 303 to the client's address. */
async function driveForm(template: string, path: string, form: Record<string, string>): Promise<void> {
  const res = await fetch(`${system.gateway}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  await res.arrayBuffer();
  answers.set(keyOf(endpointOf('POST', template)), { status: res.status, headers: res.headers, body: null });
}

const unique = () => Math.random().toString(36).slice(2, 10);

async function walletFlow(buyer: Session, seller: Session, admin: Session): Promise<void> {
  await eventually(
    () => call(system.gateway, 'GET', '/v1/wallet', { token: buyer.token }),
    (res) => res.status === 200,
  );
  await drive(buyer, 'GET', '/v1/wallet', '/v1/wallet');
  const topUpBody = { amount: 300, paymentMethod: 'Chapa', redirectUrl: 'http://localhost:3000/done' };
  const created = await drive(buyer, 'POST', '/wallets/users/{userReferenceId}/topup', `/wallets/users/${buyer.ref}/topup`, topUpBody);
  const link = new URL(created.body.data.paymentUrl);
  const ref = created.body.data.referenceId as string;
  const token = link.searchParams.get('token')!;
  const page = await fetch(`${system.gateway}/wallets/checkout/${ref}?token=${token}`);
  answers.set('GET /wallets/checkout/{walletReferenceId}', { status: page.status, headers: page.headers, body: await page.text() });
  await driveForm('/wallets/checkout/{walletReferenceId}/pay', `/wallets/checkout/${ref}/pay`, { token });
  await drive(buyer, 'GET', '/wallets/topup/{walletReferenceId}/status', `/wallets/topup/${ref}/status`);
  // The paid top-up's receipt, as JSON and as its printable page.
  await drive(buyer, 'GET', '/v1/wallet/topups/{walletReferenceId}/receipt', `/v1/wallet/topups/${ref}/receipt`);
  const receiptPage = await fetch(`${system.gateway}/v1/wallet/topups/${ref}/receipt.html`, {
    headers: { authorization: `Bearer ${buyer.token}` },
  });
  answers.set('GET /v1/wallet/topups/{walletReferenceId}/receipt.html', {
    status: receiptPage.status,
    headers: receiptPage.headers,
    body: await receiptPage.text(),
  });
  const other = await call(system.gateway, 'POST', `/wallets/users/${buyer.ref}/topup`, { token: buyer.token, body: topUpBody });
  const otherLink = new URL(other.body.data.paymentUrl);
  await driveForm('/wallets/checkout/{walletReferenceId}/cancel', `/wallets/checkout/${other.body.data.referenceId}/cancel`, {
    token: otherLink.searchParams.get('token')!,
  });
  await drive(buyer, 'GET', '/wallets/rate-limit/stats', '/wallets/rate-limit/stats');
  const banks = await drive(buyer, 'GET', '/wallets/banks', '/wallets/banks');
  const bank = (banks.body.data as Array<{ code: string; account_length: number; is_active: boolean }>).find((b) => b.is_active)!;
  const payoutBody = {
    amount: '10.00',
    bankCode: bank.code,
    accountNumber: '1'.repeat(bank.account_length),
    accountName: 'A buyer',
    reason: 'Withdrawal',
  };
  const payoutPath = `/wallets/users/${buyer.ref}/payout-request`;
  const payout = async () =>
    (await drive(buyer, 'POST', '/wallets/users/{userReferenceId}/payout-request', payoutPath, payoutBody)).body.data.referenceId;
  const move = (payoutRef: string, to: string) =>
    drive(admin, 'POST', `/wallets/payout-requests/{referenceId}/${to}`, `/wallets/payout-requests/${payoutRef}/${to}`, {
      adminNotes: 'Checked',
    });
  const [completed, failed, rejected, cancelled] = [await payout(), await payout(), await payout(), await payout()];
  for (const payoutRef of [completed, failed]) {
    await move(payoutRef, 'approve');
    await move(payoutRef, 'process');
  }
  // The admins' queue while two wait for their last move (reviewed once) and two for their first.
  await drive(admin, 'GET', '/wallets/admin/payout-requests', `/wallets/admin/payout-requests?userId=${buyer.id}`);
  await move(completed, 'complete');
  await move(failed, 'fail');
  await move(rejected, 'reject');
  await drive(buyer, 'POST', '/wallets/payout-requests/{referenceId}/cancel', `/wallets/payout-requests/${cancelled}/cancel`, {});
  await drive(buyer, 'GET', '/wallets/payout-requests/{referenceId}/status', `/wallets/payout-requests/${completed}/status`);
  await eventually(
    () => call(system.gateway, 'GET', '/v1/wallet', { token: seller.token }),
    (res) => res.status === 200,
  );
  await drive(buyer, 'POST', '/v1/wallet/transfers', '/v1/wallet/transfers', { toUserId: seller.id, amount: 1_00, currency: 'ETB' });
  // The buyer's money as they see it: the statement (and its CSV), the histories.
  await drive(buyer, 'GET', '/v1/wallet/transactions', '/v1/wallet/transactions?limit=100');
  const csv = await fetch(`${system.gateway}/v1/wallet/transactions.csv`, { headers: { authorization: `Bearer ${buyer.token}` } });
  answers.set('GET /v1/wallet/transactions.csv', { status: csv.status, headers: csv.headers, body: await csv.text() });
  await drive(buyer, 'GET', '/v1/wallet/topups', '/v1/wallet/topups');
  await drive(buyer, 'GET', '/v1/wallet/payouts', '/v1/wallet/payouts');
  await drive(buyer, 'GET', '/v1/wallet/transfers', '/v1/wallet/transfers');
}

async function catalogFlow(seller: Session): Promise<void> {
  const product = {
    name: `Coffee ${unique()}`,
    description: '<p>Washed</p>',
    sellingPrice: 10.5,
    comparePrice: 12,
    stock: 5,
    discountCode: 'LAUNCH10',
    discountPercentage: 10,
    shippingHandler: 'Seller',
    deliveryCost: 2,
    categoryId: 'MKT-CAT-GROCERY0',
    properties: [{ propertyId: 'MKT-PRO-GRORGANC', value: true }],
  };
  const base = '/physical-products/seller-products';
  await drive(null, 'GET', '/physical-products/categories', '/physical-products/categories');
  const created = await drive(seller, 'POST', `${base}/`, `${base}/`, product);
  const ref = created.body.data.id as string;
  await drive(null, 'GET', `${base}/`, `${base}/`);
  await drive(null, 'GET', `${base}/{referenceId}`, `${base}/${ref}`);
  await drive(seller, 'PATCH', `${base}/{referenceId}`, `${base}/${ref}`, { stock: 7 });
  await drive(seller, 'PATCH', `${base}/{referenceId}/visibility`, `${base}/${ref}/visibility`, { visibility: 'Hidden' });
  const draft = await drive(seller, 'POST', `${base}/draft`, `${base}/draft`, {
    categoryId: 'MKT-CAT-GROCERY0',
    metaData: { form: '{"name":"Draft"}' },
  });
  await drive(seller, 'PATCH', `${base}/draft/{referenceId}`, `${base}/draft/${draft.body.data.id}`, {
    metaData: { form: '{"name":"Edited"}' },
  });
  await drive(seller, 'GET', `${base}/my`, `${base}/my`);
  const doomed = await call(system.gateway, 'POST', `${base}/`, { token: seller.token, body: { ...product, name: 'Doomed' } });
  await drive(seller, 'DELETE', `${base}/{referenceId}`, `${base}/${doomed.body.data.id}`);
  const shop = await drive(seller, 'POST', '/v1/shops', '/v1/shops', {
    name: 'Shop',
    slug: `shop-${unique()}`,
    country: 'ET',
    category: 'Coffee',
  });
  await drive(seller, 'GET', '/v1/shops/{shopId}', `/v1/shops/${shop.body.data.id}`);
  const v1 = await drive(seller, 'POST', '/v1/products', '/v1/products', {
    title: 'Beans',
    price: 1_000,
    currency: 'ETB',
    sku: `SKU-${unique()}`,
    inventory: 3,
  });
  await drive(seller, 'GET', '/v1/products/{productId}', `/v1/products/${v1.body.data.id}`);
  await drive(seller, 'GET', '/v1/products', '/v1/products');
}

const period = () => ({
  validFrom: new Date(Date.now() - 86_400_000).toISOString(),
  validTo: new Date(Date.now() + 30 * 86_400_000).toISOString(),
});

/** The seller's set-up and consultation, approved; returns it as the fixtures' Offer. */
async function offerFlow(seller: Session, admin: Session): Promise<Offer> {
  const ruleSet = await drive(
    seller,
    'POST',
    '/consultations/availability-rule-sets/rule-sets',
    '/consultations/availability-rule-sets/rule-sets',
    {
      name: 'Every day',
      description: 'All day long',
      timezone: 'Africa/Addis_Ababa',
      metaData: { autoAccept: true, bufferTime: 0, maxBookingsPerDay: 1000 },
      availabilityRules: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'].map((weekday) => ({
        type: 'weekly',
        weekday,
        intervals: [{ start_time: '00:00:00', end_time: '23:59:59', enabled: true }],
      })),
    },
  );
  const ruleSetId = ruleSet.body.data.id as string;
  await drive(seller, 'GET', '/consultations/availability-rule-sets/rule-sets', '/consultations/availability-rule-sets/rule-sets');
  await drive(
    seller,
    'GET',
    '/consultations/availability-rule-sets/rule-sets/{id}',
    `/consultations/availability-rule-sets/rule-sets/${ruleSetId}`,
  );
  const pricing = await drive(seller, 'POST', '/consultations/pricing', '/consultations/pricing', {
    basePrice: 10,
    currency: 'ETB',
    comparePrice: 12,
  });
  const consultation = await drive(seller, 'POST', '/consultations', '/consultations', {
    title: `Advice ${unique()}`,
    description: 'Short answers',
    duration: 5,
    sessionType: 'OneToOne',
    deliveryMode: 'Online',
    timezone: 'Africa/Addis_Ababa',
    language: 'English',
    category: 'Business',
    subcategory: ['Start-ups'],
    tags: ['planning'],
    ruleSetId,
    pricingId: pricing.body.data.id,
  });
  const id = consultation.body.data.id as string;
  await drive(admin, 'GET', '/consultations/admin/approvals', `/consultations/admin/approvals?sellerId=${seller.id}`);
  await drive(admin, 'POST', '/consultations/{id}/approve', `/consultations/${id}/approve`, { version: consultation.body.data.version });
  await drive(seller, 'PUT', '/consultations/{id}', `/consultations/${id}`, { description: 'Short, clear answers' });
  await drive(null, 'GET', '/consultations', '/consultations');
  await drive(null, 'GET', '/consultations/{id}', `/consultations/${id}`);
  const day = dayFromNow(3);
  await drive(null, 'GET', '/consultations/{id}/slots', `/consultations/${id}/slots?from=${day}&to=${day}`);
  return {
    id,
    referenceId: consultation.body.data.referenceId,
    ruleSetId,
    sellerId: seller.id,
    priceMajor: 10,
    duration: 5,
    capacity: 1,
    timezone: 'Africa/Addis_Ababa',
  };
}

/** Returns the consultation whose session the buyer completed (the one to review). */
async function consultationFlow(seller: Session, buyer: Session, offer: Offer, admin: Session): Promise<Offer> {
  const coupon = `SAVE${unique()}`.toUpperCase();
  await drive(seller, 'POST', '/consultations/pricing/promotional-discounts', '/consultations/pricing/promotional-discounts', {
    name: 'Launch',
    description: 'Ten off',
    discountType: 'Percentage',
    discountValue: 10,
    couponCode: coupon,
    maxUses: 5,
    ...period(),
  });
  await drive(
    buyer,
    'POST',
    '/consultations/pricing/promotional-discounts/validate-coupon',
    '/consultations/pricing/promotional-discounts/validate-coupon',
    {
      couponCode: coupon,
      consultationId: offer.id,
    },
  );
  await drive(seller, 'POST', '/consultations/visibility/rule-sets', '/consultations/visibility/rule-sets', {
    name: 'Everyone',
    visibilityRules: [{ type: 'user_type', condition: 'buyer', action: 'show', priority: 1 }],
    ...period(),
  });
  await drive(buyer, 'POST', '/consultations/visibility/status', '/consultations/visibility/status', {
    consultationIds: [offer.id, 'con_unknown'],
    context: { userType: 'buyer' },
  });
  const later = slotsOf(offer, dayFromNow(3))[0]!;
  const booked = await drive(buyer, 'POST', '/consultations/bookings', '/consultations/bookings', {
    SellerId: offer.sellerId,
    consultationId: offer.id,
    ruleSetId: offer.ruleSetId,
    ...later,
    participants: [{ fullName: 'A buyer', email: buyer.email, phone: '+251911223344' }],
    subTotal: offer.priceMajor,
    totalAmount: offer.priceMajor,
    currency: 'ETB',
    notes: 'First time',
  });
  await drive(buyer, 'GET', '/consultations/bookings/{id}', `/consultations/bookings/${booked.body.data.bookingId}`);
  await drive(buyer, 'GET', '/consultations/bookings', '/consultations/bookings');
  await drive(buyer, 'POST', '/consultations/bookings/cancel', '/consultations/bookings/cancel', {
    bookingId: booked.body.data.bookingId,
    reason: 'Travelling',
    refundAmount: 5,
  });
  // The cancelled booking's receipt (list price, paid, its refund), as JSON and as its printable page.
  const bookingId = booked.body.data.bookingId as string;
  await drive(buyer, 'GET', '/consultations/bookings/{id}/receipt', `/consultations/bookings/${bookingId}/receipt`);
  const receiptPage = await fetch(`${system.gateway}/consultations/bookings/${bookingId}/receipt.html`, {
    headers: { authorization: `Bearer ${seller.token}` },
  });
  answers.set('GET /consultations/bookings/{id}/receipt.html', {
    status: receiptPage.status,
    headers: receiptPage.headers,
    body: await receiptPage.text(),
  });
  // A session ends only once its slot has begun: a slot of its own that begins in about a minute.
  const soonSlot = await offerSoonSlot(system, seller, admin, { priceMajor: offer.priceMajor });
  const soon = await book(system, buyer, soonSlot.offer, soonSlot.slot);
  if (soon.status !== 200) throw new Error(`booking a near slot: ${soon.status} ${JSON.stringify(soon.body)}`);
  const sessionId = soon.body.data.sessionId as string;
  await drive(seller, 'GET', '/consultations/sessions', '/consultations/sessions');
  await drive(seller, 'POST', '/consultations/sessions/{id}/start', `/consultations/sessions/${sessionId}/start`, { notes: 'On time' });
  await waitForSlotStart(soonSlot.startsAt);
  await drive(seller, 'POST', '/consultations/sessions/{id}/end', `/consultations/sessions/${sessionId}/end`, {
    sessionSummary: 'Done',
    nextSteps: 'Follow up',
  });
  // An admin voids a hold by hand, then reads it with the void in its history.
  const toVoid = await book(system, buyer, offer, slotsOf(offer, dayFromNow(3))[1]!);
  if (toVoid.status !== 200) throw new Error(`booking to void: ${toVoid.status} ${JSON.stringify(toVoid.body)}`);
  const voided = `/wallets/booking-holds/${toVoid.body.data.bookingId}`;
  await drive(admin, 'POST', '/wallets/booking-holds/{bookingId}/void', `${voided}/void`, { reason: 'The session never took place' });
  await drive(admin, 'GET', '/wallets/booking-holds/{bookingId}', voided);
  return soonSlot.offer;
}

async function reviewFlow(buyer: Session, offer: Offer): Promise<void> {
  const eligible = await eventually(
    () => call(system.gateway, 'GET', `/reviews/consultation/${offer.id}/status`, { token: buyer.token }),
    (res) => res.body.data?.canReview === true,
    10_000,
  );
  answers.set('GET /reviews/consultation/{id}/status', eligible.value);
  const review = await drive(buyer, 'POST', '/reviews', '/reviews', {
    entityType: 'consultation_service',
    entityId: offer.id,
    rating: 4,
    comment: 'Fish & chips <3',
  });
  await drive(null, 'GET', '/reviews/by-entity', `/reviews/by-entity?entityType=consultation_service&entityId=${offer.id}`);
  await drive(buyer, 'PATCH', '/reviews/{id}', `/reviews/${review.body.data.reviewId}`, { isActive: false });
}

async function crmFlow(seller: Session, buyer: Session): Promise<void> {
  // The booking of the consultation flow made the CRM open the pair's relationship.
  await eventually(
    () => call(system.gateway, 'GET', `/customers/seller/${seller.id}`, { token: seller.token }),
    (res) => res.body.data?.total >= 1,
    10_000,
  );
  const own = await call(system.gateway, 'GET', `/customers/seller/${seller.id}`, { token: seller.token });
  const pair = (own.body.data.customers as Array<{ id: string; buyerId: string }>).find((row) => row.buyerId === buyer.id)!;
  // A create names one of the seller's buyers: this one, once the relationship the booking
  // opened is gone (its seller may remove it).
  await drive(seller, 'DELETE', '/customers/{id}', `/customers/${pair.id}`);
  const created = await drive(seller, 'POST', '/customers', '/customers', { sellerId: seller.id, buyerId: buyer.id, tags: ['new'] });
  const id = created.body.data.id as string;
  // Following is the buyer's to set; the rest of the relationship is the seller's.
  await drive(buyer, 'PUT', '/customers/{id}', `/customers/${id}`, { isFollower: true, followStatus: 'Following' });
  await drive(seller, 'PUT', '/customers/{id}', `/customers/${id}`, { isFavorite: true, tags: ['vip'] });
  await drive(seller, 'GET', '/customers/{id}', `/customers/${id}`);
  await drive(seller, 'GET', '/customers', '/customers');
  for (const listing of ['', '/followers', '/favorites', '/high-value', '/analytics'])
    await drive(seller, 'GET', `/customers/seller/{sellerId}${listing}`, `/customers/seller/${seller.id}${listing}`);
  for (const listing of ['', '/following', '/customers'])
    await drive(buyer, 'GET', `/customers/buyer/{buyerId}${listing}`, `/customers/buyer/${buyer.id}${listing}`);
  await drive(seller, 'DELETE', '/customers/{id}', `/customers/${id}`);
}

async function gatewayFlow(buyer: Session): Promise<void> {
  const login = await drive(null, 'POST', '/v1/auth/login', '/v1/auth/login', { email: buyer.email, password: 'a long password' });
  const refreshed = await drive(null, 'POST', '/v1/auth/refresh', '/v1/auth/refresh', { refreshToken: login.body.data.refreshToken });
  await drive(null, 'POST', '/v1/auth/logout', '/v1/auth/logout', { refreshToken: refreshed.body.data.refreshToken });
  await drive(buyer, 'GET', '/v1/auth/me', '/v1/auth/me');
  await drive(null, 'GET', '/v1/auth/.well-known/jwks.json', '/v1/auth/.well-known/jwks.json');
}

/** The audit log of the admin's actions above (its entries arrive through the broker), and its CSV export. */
async function auditFlow(admin: Session): Promise<void> {
  await eventually(
    () => call(system.gateway, 'GET', `/v1/admin/audit-log?actorId=${admin.id}&limit=5`, { token: admin.token }),
    (res) => res.status === 200 && res.body.data.entries.length === 5,
    30_000,
  );
  await drive(admin, 'GET', '/v1/admin/audit-log', `/v1/admin/audit-log?actorId=${admin.id}&limit=5`);
  const csv = await fetch(`${system.gateway}/v1/admin/audit-log/export?actorId=${admin.id}`, {
    headers: { authorization: `Bearer ${admin.token}` },
  });
  answers.set('GET /v1/admin/audit-log/export', { status: csv.status, headers: csv.headers, body: await csv.text() });
}

beforeAll(async () => {
  system = await startSystem({ envOf: { wallet: { LIMIT_DAILY: '1000', LIMIT_WEEKLY: '1000', LIMIT_MONTHLY: '1000' } } });
  const admin = await loginAdmin(system);
  const registered = await drive(null, 'POST', '/v1/auth/register', '/v1/auth/register', {
    email: `seller-${unique()}@example.com`,
    password: 'a long password',
    fullName: 'A seller',
    role: 'seller',
  });
  const seller: Session = {
    token: registered.body.data.accessToken,
    id: registered.body.data.user.id,
    ref: registered.body.data.user.referenceId,
    email: registered.body.data.user.email,
    role: 'seller',
  };
  const buyer = await register(system, 'buyer', 'A buyer');
  await gatewayFlow(buyer);
  await walletFlow(buyer, seller, admin);
  await fund(system, [buyer], 200);
  await catalogFlow(seller);
  const offer = await offerFlow(seller, admin);
  const delivered = await consultationFlow(seller, buyer, offer, admin);
  // The seller's earnings once a paid booking of theirs exists (open or captured).
  await drive(seller, 'GET', '/v1/wallet/earnings', '/v1/wallet/earnings');
  await reviewFlow(buyer, delivered);
  await crmFlow(seller, buyer);
  await auditFlow(admin);
  parties = { admin, seller, buyer, offer, delivered };
}, 300_000);
afterAll(() => system?.stop(), 60_000);

test('every operation is driven to a success here, or listed with the reason it cannot be', () => {
  const missing = ENDPOINTS.map(keyOf).filter((key) => !answers.has(key) && !NOT_DRIVEN[key]);
  expect(missing).toEqual([]);
  expect(Object.keys(NOT_DRIVEN).every((key) => ENDPOINTS.some((endpoint) => keyOf(endpoint) === key))).toBe(true);
});

const driven = ENDPOINTS.filter((endpoint) => !NOT_DRIVEN[keyOf(endpoint)]);
describe.each(driven.map((endpoint) => [keyOf(endpoint), endpoint] as const))('%s', (key, endpoint) => {
  test('answers what its documented response schema allows, and all it requires', () => {
    const res = answers.get(key)!;
    expect(res).toBeDefined();
    if (endpoint.produces === 'redirect') {
      expect(res.status).toBe(303);
      return;
    }
    expect(res.status).toBe(200);
    if (endpoint.produces === 'html') {
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      return;
    }
    if (endpoint.produces === 'csv') {
      expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
      expect(String(res.body).split('\r\n').filter(Boolean).length).toBeGreaterThan(1);
      return;
    }
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const parsed = bodySchema(endpoint).safeParse(res.body);
    expect(parsed.error?.issues ?? []).toEqual([]);
  });
});

/** Lists in an answer's data (at its top or one level down) that came back empty. */
function emptyLists(data: unknown, at = 'data'): string[] {
  if (Array.isArray(data)) return data.length === 0 ? [at] : [];
  if (data === null || typeof data !== 'object' || at.split('.').length > 2) return [];
  return Object.entries(data).flatMap(([key, value]) => emptyLists(value, `${at}.${key}`));
}

test('every list of the answers checked has rows, so that their items were checked too', () => {
  const empty = [...answers.entries()].flatMap(([key, res]) =>
    typeof res.body === 'object' && res.body !== null
      ? emptyLists((res.body as { data?: unknown }).data).map((path) => `${key} ${path}`)
      : [],
  );
  expect(empty).toEqual([]);
});

test('the check fails on an undocumented field and on a missing one', () => {
  const endpoint = endpointOf('GET', '/v1/wallet');
  const { body } = answers.get('GET /v1/wallet')!;
  expect(bodySchema(endpoint).safeParse(body).success).toBe(true);
  expect(bodySchema(endpoint).safeParse({ ...body, data: { ...body.data, internalNote: 'x' } }).success).toBe(false);
  const { heldBalance: _held, ...withoutHeld } = body.data;
  expect(bodySchema(endpoint).safeParse({ ...body, data: withoutHeld }).success).toBe(false);
});

/**
 * Refusals of the running system, each of the operation named (a 405: of another method on its
 * path): the status, and every code of the answer's `errors`, are among those the document
 * lists for it.
 */
const REFUSALS: Array<[operation: string, status: ErrorStatus, send: () => Promise<JsonResponse>]> = [
  [
    'POST /v1/auth/register',
    409,
    () =>
      call(system.gateway, 'POST', '/v1/auth/register', {
        body: { email: parties.seller.email, password: 'a long password', fullName: 'Again', role: 'seller' },
      }),
  ],
  [
    'POST /v1/auth/login',
    401,
    () => call(system.gateway, 'POST', '/v1/auth/login', { body: { email: parties.buyer.email, password: 'not the password' } }),
  ],
  ['GET /v1/auth/me', 401, () => call(system.gateway, 'GET', '/v1/auth/me', { token: 'not-a-token' })],
  ['GET /wallets/banks', 401, () => call(system.gateway, 'GET', '/wallets/banks')],
  ['GET /wallets/banks', 405, () => call(system.gateway, 'PUT', '/wallets/banks', { token: parties.buyer.token, body: {} })],
  [
    'POST /v1/wallet/transfers',
    422,
    () =>
      call(system.gateway, 'POST', '/v1/wallet/transfers', {
        token: parties.buyer.token,
        body: { toUserId: parties.seller.id, amount: 100, currency: 'USD' },
      }),
  ],
  [
    'GET /v1/wallet/topups/{walletReferenceId}/receipt',
    409,
    // A top-up still open has no receipt yet.
    async () => {
      const created = await call(system.gateway, 'POST', `/wallets/users/${parties.buyer.ref}/topup`, {
        token: parties.buyer.token,
        body: { amount: 5, paymentMethod: 'Chapa', redirectUrl: 'http://localhost:3000/done' },
      });
      return call(system.gateway, 'GET', `/v1/wallet/topups/${created.body.data.referenceId}/receipt`, { token: parties.buyer.token });
    },
  ],
  [
    'GET /consultations/bookings/{id}/receipt',
    404,
    () => call(system.gateway, 'GET', '/consultations/bookings/bk_unknown/receipt', { token: parties.buyer.token }),
  ],
  [
    'GET /physical-products/seller-products/',
    401,
    () => call(system.gateway, 'GET', '/physical-products/seller-products/', { token: 'not-a-token' }),
  ],
  [
    'GET /customers/seller/{sellerId}',
    403,
    () => call(system.gateway, 'GET', `/customers/seller/${parties.seller.id}`, { token: parties.buyer.token }),
  ],
  ['GET /consultations/{id}', 404, () => call(system.gateway, 'GET', '/consultations/MKT-CON-ZZZZZZZZ')],
  [
    'POST /consultations/{id}/approve',
    409,
    // An approved consultation with an edit pending (the flow updated it): naming another revision.
    () =>
      call(system.gateway, 'POST', `/consultations/${parties.offer.id}/approve`, {
        token: parties.admin.token,
        body: { revisionId: '00000000-0000-4000-8000-000000000000' },
      }),
  ],
  [
    'POST /consultations/bookings',
    422,
    () => {
      const { offer, buyer } = parties;
      return book(system, buyer, { ...offer, priceMajor: offer.priceMajor + 1 }, slotsOf(offer, dayFromNow(4))[0]!);
    },
  ],
  [
    'POST /reviews',
    409,
    () =>
      call(system.gateway, 'POST', '/reviews', {
        token: parties.buyer.token,
        body: { entityType: 'consultation_service', entityId: parties.delivered.id, rating: 3 },
      }),
  ],
];

describe.each(REFUSALS)('%s refused with %d', (operation, status, send) => {
  test('is documented for the operation, with the codes it carries', async () => {
    const [method, path] = operation.split(' ') as [string, string];
    const res = await send();
    expect(res.status).toBe(status);
    const documented: readonly string[] = errorAnswers(endpointOf(method, path)).get(status) ?? [];
    expect(documented).not.toEqual([]);
    const codes = (res.body as { errors: Array<{ code: string }> }).errors.map((item) => item.code);
    expect(codes.filter((code) => !documented.includes(code))).toEqual([]);
  });
});
