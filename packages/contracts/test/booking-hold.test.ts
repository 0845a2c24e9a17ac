import { bookingHoldBody, CreateBookingHoldBody } from '@mkt/contracts';

// The wallet's internal hold of a booking has one writer: what the consultation's flow and the
// reconcile tool send is this builder's body, which the wallet's own schema accepts.
describe('bookingHoldBody: the wallet hold request of a booking', () => {
  const booking = {
    _id: 'bk_0123456789abcdef',
    buyerId: 'u-buyer',
    buyerRef: 'MKT-USR-0000AB12',
    sellerId: 'u-seller',
    totalAmountMinor: 450_00,
    currency: 'ETB',
    endsAt: new Date('2030-05-13T10:00:00.000Z'),
    consultationId: 'con_1',
    // What a stored booking carries besides: not sent.
    status: 'PaymentPending',
    subTotalMinor: 500_00,
  };

  test('the whole total, held until the slot’s end, for the booked consultation; the wallet’s schema accepts it as is', () => {
    const body = bookingHoldBody(booking);
    expect(body).toEqual({
      bookingId: 'bk_0123456789abcdef',
      buyerId: 'u-buyer',
      buyerRef: 'MKT-USR-0000AB12',
      sellerId: 'u-seller',
      amountMinor: 450_00,
      currency: 'ETB',
      endsAt: '2030-05-13T10:00:00.000Z',
      consultationId: 'con_1',
    });
    expect(CreateBookingHoldBody.parse(body)).toEqual(body);
  });

  test('a slot end read as text (a tool’s JSON) gives the same body', () => {
    expect(bookingHoldBody({ ...booking, endsAt: '2030-05-13T10:00:00.000Z' })).toEqual(bookingHoldBody(booking));
  });
});
