import { ENDPOINTS, successBodySchema } from '@mkt/contracts';
import { admin, as, bookingBody, givenOffer, newUser, tokenOf, type Offer } from './harness';
import { eventually, usePaidPair } from './paid-harness';

const app = usePaidPair();
const NAME = '<script>alert("coupon")</script> & friends';
const receiptSchema = successBodySchema(ENDPOINTS.find((e) => e.operationId === 'getBookingReceipt')!)!;

type User = ReturnType<typeof newUser>;
const receipt = (user: User, id: string) => as(app, user)('GET', `/consultations/bookings/${id}/receipt`);

function givenCoupon(offer: Offer) {
  return as(app, offer.seller)('POST', '/consultations/pricing/promotional-discounts', {
    name: NAME,
    discountType: 'Percentage',
    discountValue: 10,
    validFrom: new Date(Date.now() - 86_400_000).toISOString(),
    validTo: new Date(Date.now() + 86_400_000).toISOString(),
    couponCode: 'LAUNCH10',
    maxUses: 5,
  });
}

/** A paid booking of the offer (price 500) with its 10 % coupon: 450 held at the wallet. */
async function bookWithCoupon(): Promise<{ offer: Offer; buyer: User; id: string }> {
  const offer = await givenOffer(app);
  expect((await givenCoupon(offer)).status).toBe(200);
  const buyer = newUser('buyer', { balanceMinor: 1_000_00 });
  const res = await as(app, buyer)('POST', '/consultations/bookings', bookingBody(offer, { couponCode: 'LAUNCH10', totalAmount: 450 }));
  expect(res.body.data?.status).toBe('Confirmed');
  return { offer, buyer, id: res.body.data.bookingId };
}

describe('booking receipts', () => {
  test('its buyer, its seller and an admin read it: list price, coupon, discount, paid, references', async () => {
    const { offer, buyer, id } = await bookWithCoupon();
    for (const reader of [buyer, offer.seller, admin]) {
      const res = await receipt(reader, id);
      expect(res.status).toBe(200);
      expect(receiptSchema.safeParse(res.body).success).toBe(true);
      expect(res.body.data).toMatchObject({
        bookingId: id,
        status: 'Confirmed',
        consultationId: offer.consultationId,
        sellerId: offer.seller.id,
        buyerId: buyer.id,
        currency: 'ETB',
        listPrice: 500,
        coupon: { code: 'LAUNCH10', name: NAME },
        discount: 50,
        paid: 450,
        payment: 'held',
        walletHoldId: id,
        refund: null,
        cancelledAt: null,
      });
    }
  });

  test('anyone else gets 404, as for a booking that does not exist', async () => {
    const { id } = await bookWithCoupon();
    const stranger = newUser('seller');
    for (const path of [`/consultations/bookings/${id}/receipt`, `/consultations/bookings/${id}/receipt.html`]) {
      const res = await as(app, stranger)('GET', path);
      expect(res.status).toBe(404);
      expect(res.body.errors[0].code).toBe('not_found');
    }
    expect((await receipt(stranger, 'bk_doesnotexist')).status).toBe(404);
    expect((await as(app, undefined)('GET', `/consultations/bookings/${id}/receipt`)).status).toBe(401);
  });

  test('cancelled with a refund: the receipt shows the refund, Pending then Refunded when the wallet reports it', async () => {
    const { buyer, id } = await bookWithCoupon();
    const cancelled = await as(app, buyer)('POST', '/consultations/bookings/cancel', { bookingId: id, refundAmount: 200 });
    expect(cancelled.status).toBe(200);
    const pending = await receipt(buyer, id);
    expect(pending.body.data).toMatchObject({ status: 'Cancelled', paid: 450, discount: 50, refund: { amount: 200 } });
    expect(pending.body.data.cancelledAt).not.toBeNull();
    const refunded = await eventually(
      () => receipt(buyer, id),
      (r) => r.body.data?.refund?.status === 'Refunded',
    );
    expect(refunded.body.data.refund).toEqual({ status: 'Refunded', amount: 200, refundedAt: expect.any(String) });
    expect(receiptSchema.safeParse(refunded.body).success).toBe(true);
  });

  test('the page escapes every value (a coupon named with a script) and its policy runs no script', async () => {
    const { offer, id } = await bookWithCoupon();
    const res = await fetch(`${app().url}/consultations/bookings/${id}/receipt.html`, {
      headers: { authorization: `Bearer ${tokenOf(offer.seller)}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/style-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).not.toMatch(/script-src|unsafe-inline|unsafe-eval/);
    const html = await res.text();
    expect(html).not.toContain('<script');
    expect(html).toContain('LAUNCH10 (&lt;script&gt;alert(&quot;coupon&quot;)&lt;/script&gt; &amp; friends)');
    expect(html).toContain('500.00 ETB');
    expect(html).toContain('-50.00 ETB');
    expect(html).toContain('450.00 ETB');
    expect(html).not.toMatch(/<(link|img|iframe)\b|src=|href=/);
  });
});
