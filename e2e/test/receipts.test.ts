import { MarketplaceClient } from '@mkt/client';
import {
  apiOf,
  bookingBody,
  dayFromNow,
  fundedBuyer,
  loginAdmin,
  offerConsultation,
  register,
  slotsOf,
  topUp,
  waitFor,
  type Session,
} from './fixtures';
import { startSystem, type System } from './system';

// Receipts through the gateway and the SDK: a paid booking with a coupon, cancelled with a
// refund, whose receipt shows the discount and then the refund; a top-up's receipt and pages.

let system: System;
beforeAll(async () => {
  system = await startSystem();
}, 120_000);
afterAll(() => system?.stop(), 60_000);

/** The SDK as `session` (a token fresh for the test: never refreshed). */
const sdkOf = (session: Session) =>
  new MarketplaceClient({ baseUrl: system.gateway, tokens: { accessToken: session.token, refreshToken: 'unused' } }).api;
const page = (session: Session, path: string) =>
  fetch(`${system.gateway}${path}`, { headers: { authorization: `Bearer ${session.token}` } });

test('a paid booking with a coupon, then cancelled with a refund: its receipt shows the discount and the refund', async () => {
  const admin = await loginAdmin(system);
  const seller = await register(system, 'seller');
  const offer = await offerConsultation(system, seller, admin, { priceMajor: 200 });
  const code = `RCPT${Math.random().toString(36).slice(2, 8)}`.toUpperCase();
  const coupon = await apiOf(system, seller)('POST', '/consultations/pricing/promotional-discounts', {
    name: 'Opening <script>alert(1)</script>',
    discountType: 'Percentage',
    discountValue: 25,
    couponCode: code,
    maxUses: 5,
    validFrom: new Date(Date.now() - 86_400_000).toISOString(),
    validTo: new Date(Date.now() + 30 * 86_400_000).toISOString(),
  });
  expect(coupon.status).toBe(200);
  const buyer = await fundedBuyer(system, 500);
  const slot = slotsOf(offer, dayFromNow(5))[0]!;
  const booked = await apiOf(system, buyer)('POST', '/consultations/bookings', {
    ...bookingBody(offer, slot, buyer.email),
    couponCode: code,
    totalAmount: 150,
  });
  expect(booked.status).toBe(200);
  const id = booked.body.data.bookingId as string;

  const receipt = () => sdkOf(buyer).GET('/consultations/bookings/{id}/receipt', { params: { path: { id } } });
  const before = (await receipt()).data!.data;
  expect(before).toMatchObject({
    bookingId: id,
    status: 'Confirmed',
    sellerId: seller.id,
    buyerId: buyer.id,
    listPrice: 200,
    coupon: { code, name: 'Opening <script>alert(1)</script>' },
    discount: 50,
    paid: 150,
    payment: 'held',
    walletHoldId: id,
    refund: null,
  });

  const cancelled = await apiOf(system, buyer)('POST', '/consultations/bookings/cancel', { bookingId: id, refundAmount: 100 });
  expect(cancelled.status).toBe(200);
  const refunded = await waitFor(
    'the wallet to report the refund',
    async () => (await receipt()).data!.data,
    (data) => data.refund?.status === 'Refunded',
  );
  expect(refunded).toMatchObject({
    status: 'Cancelled',
    listPrice: 200,
    discount: 50,
    paid: 150,
    refund: { status: 'Refunded', amount: 100 },
  });
  expect(refunded.cancelledAt).not.toBeNull();
  // The seller and an admin read the same receipt; another buyer is told it does not exist.
  expect((await sdkOf(seller).GET('/consultations/bookings/{id}/receipt', { params: { path: { id } } })).data!.data).toEqual(refunded);
  expect((await sdkOf(admin).GET('/consultations/bookings/{id}/receipt', { params: { path: { id } } })).data!.data).toEqual(refunded);
  const stranger = await register(system, 'buyer');
  expect((await sdkOf(stranger).GET('/consultations/bookings/{id}/receipt', { params: { path: { id } } })).response.status).toBe(404);

  const printable = await page(buyer, `/consultations/bookings/${id}/receipt.html`);
  expect(printable.status).toBe(200);
  expect(printable.headers.get('content-security-policy')).toMatch(/^default-src 'none';/);
  const html = await printable.text();
  expect(html).toContain('Opening &lt;script&gt;alert(1)&lt;/script&gt;');
  expect(html).not.toContain('<script');
  for (const shown of ['200.00 ETB', '-50.00 ETB', '150.00 ETB', '100.00 ETB', 'Refunded']) expect(html).toContain(shown);
  expect((await page(stranger, `/consultations/bookings/${id}/receipt.html`)).status).toBe(404);
}, 120_000);

test('a top-up’s receipt through the gateway: its owner and an admin, others 404', async () => {
  const admin = await loginAdmin(system);
  const owner = await fundedBuyer(system, 10);
  const ref = await topUp(system, owner, 42.5);
  const read = (session: Session) =>
    sdkOf(session).GET('/v1/wallet/topups/{walletReferenceId}/receipt', { params: { path: { walletReferenceId: ref } } });
  const mine = await read(owner);
  expect(mine.data!.data).toMatchObject({ referenceId: ref, amount: 42.5, amountMinor: 4250, status: 'Completed', ownerId: owner.id });
  expect((await read(admin)).data!.data).toEqual(mine.data!.data);
  const other = await register(system, 'buyer');
  expect((await read(other)).response.status).toBe(404);
  const printable = await page(owner, `/v1/wallet/topups/${ref}/receipt.html`);
  expect(printable.status).toBe(200);
  expect(printable.headers.get('content-type')).toMatch(/^text\/html/);
  expect(await printable.text()).toContain('42.50 ETB');
  expect((await page(other, `/v1/wallet/topups/${ref}/receipt.html`)).status).toBe(404);
}, 60_000);
