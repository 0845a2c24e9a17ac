import {
  // The document with its named schemas inlined: the check reads request schemas without resolving $ref.
  buildInlinedOpenApi as buildOpenApi,
  CancelBookingBody,
  CreateBookingBody,
  CreateDiscountBody,
  CreatePricingBody,
} from '@mkt/contracts';

// The consultation bodies' money arrives in major units under the interface's names and leaves
// the parser in minor units under `*Minor` names; the OpenAPI document still shows the names and
// constraints a client sends.

const booking = {
  SellerId: '8a7b6c5d-4e3f-4a2b-9c1d-0e9f8a7b6c5d',
  consultationId: 'MKT-CON-7Q2M9XKD',
  ruleSetId: 'MKT-AVL-RST-7Q2M9XKD',
  date: '2026-11-26',
  startTime: '09:00',
  endTime: '10:00',
  participants: [{ fullName: 'Sara Tesfaye', email: 'sara@example.com', phone: '+251911223344' }],
  subTotal: 750.5,
  totalAmount: 675.45,
  currency: 'ETB',
};
const discount = {
  name: 'Launch',
  validFrom: '2030-01-01T00:00:00.000Z',
  validTo: '2030-02-01T00:00:00.000Z',
  couponCode: 'LAUNCH',
  maxUses: 10,
};

describe('consultation bodies name their parsed amounts *Minor', () => {
  test('a booking: subTotalMinor and totalAmountMinor, no major-unit names left', () => {
    const parsed = CreateBookingBody.parse(booking);
    expect(parsed).toMatchObject({ subTotalMinor: 75050, totalAmountMinor: 67545 });
    expect(parsed).not.toHaveProperty('subTotal');
    expect(parsed).not.toHaveProperty('totalAmount');
  });

  test('a cancel: refundAmountMinor when sent, absent when not', () => {
    expect(CancelBookingBody.parse({ bookingId: 'BK_7Q2M9XKD', refundAmount: 60.1 })).toMatchObject({ refundAmountMinor: 6010 });
    const without = CancelBookingBody.parse({ bookingId: 'BK_7Q2M9XKD' });
    expect(without).not.toHaveProperty('refundAmountMinor');
    expect(without).not.toHaveProperty('refundAmount');
  });

  test('pricing: basePriceMinor and comparePriceMinor; the comparison refinement still names comparePrice', () => {
    expect(CreatePricingBody.parse({ basePrice: 750, comparePrice: 900.99, currency: 'etb' })).toEqual({
      basePriceMinor: 75000,
      comparePriceMinor: 90099,
      currency: 'ETB',
      pricingStrategy: 'Fixed',
      isOnSale: false,
      isActive: true,
    });
    const cheaper = CreatePricingBody.safeParse({ basePrice: 750, comparePrice: 700, currency: 'ETB' });
    expect(cheaper.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['comparePrice']);
    const bad = CreatePricingBody.safeParse({ basePrice: 1.005, currency: 'ETB' });
    expect(bad.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['basePrice']);
  });

  test('a Fixed discount is money (discountValueMinor); a Percentage is not (discountValue)', () => {
    const fixed = CreateDiscountBody.parse({ ...discount, discountType: 'Fixed', discountValue: 19.99 });
    expect(fixed).toMatchObject({ discountType: 'Fixed', discountValueMinor: 1999 });
    expect(fixed).not.toHaveProperty('discountValue');
    const percentage = CreateDiscountBody.parse({ ...discount, discountType: 'Percentage', discountValue: 12.5 });
    expect(percentage).toMatchObject({ discountType: 'Percentage', discountValue: 12.5 });
    expect(percentage).not.toHaveProperty('discountValueMinor');
  });

  test('the OpenAPI request schemas keep the names a client sends, with the money constraints', () => {
    const paths = buildOpenApi().paths as Record<string, Record<string, unknown>>;
    const propertiesOf = (path: string) =>
      (paths[path]!.post as { requestBody: { content: { 'application/json': { schema: { properties: Record<string, object> } } } } })
        .requestBody.content['application/json'].schema.properties;
    const money = { multipleOf: 0.01, minimum: 0 };
    expect(propertiesOf('/consultations/pricing')).toMatchObject({ basePrice: money, comparePrice: money });
    expect(propertiesOf('/consultations/bookings')).toMatchObject({ subTotal: money, totalAmount: money });
    expect(propertiesOf('/consultations/bookings/cancel')).toMatchObject({ refundAmount: money });
    expect(propertiesOf('/consultations/pricing/promotional-discounts')).toHaveProperty('discountValue');
    for (const path of ['/consultations/pricing', '/consultations/bookings', '/consultations/bookings/cancel'])
      expect(Object.keys(propertiesOf(path)).filter((name) => name.endsWith('Minor'))).toEqual([]);
  });
});
