import { ENDPOINTS, makeEvent, successBodySchema } from '@mkt/contracts';
import { listenForEvents, testServers } from '@mkt/infra';
import { bookingEventsConsumer } from '../src/events/bookings.consumer';
import { call, env, givenBalance, log, newUser, openWallet, tokenOf, uniqueName, useWallet } from './harness';

// The wallet's admin queue of holds (overdue or disputed: listed until handled, with counts) and
// the audit entries of the admins' hold decisions: one event per decision, pushed by the
// decision's own write; a refused one pushes none.
const TOKEN = 'internal-token-for-the-tests-0123456789';
const walletApp = useWallet({ INTERNAL_API_TOKEN: TOKEN });
const HOUR = 3_600_000;
const admin = newUser('admin');
const asAdmin = (method: string, path: string, body?: object, headers: Record<string, string> = {}) =>
  call(walletApp().url, method, path, { token: tokenOf(admin), body, headers });
const handlers = () => bookingEventsConsumer(walletApp().parts.holds).handlers;

async function heldBooking(endsAt: Date) {
  const buyer = newUser();
  const seller = newUser('seller');
  await givenBalance(buyer, 100_00);
  await openWallet(seller.id, seller.ref, 'MKT');
  const body = {
    bookingId: uniqueName('bk'),
    buyerId: buyer.id,
    buyerRef: buyer.ref,
    sellerId: seller.id,
    amountMinor: 100_00,
    currency: 'ETB',
  };
  const held = await call(walletApp().url, 'POST', '/internal/holds', {
    body: { ...body, endsAt: endsAt.toISOString() },
    headers: { 'x-internal-token': TOKEN },
  });
  expect(held.status).toBe(200);
  return { buyer, seller, bookingId: body.bookingId };
}

const origin = { source: 'consultation' };
const markNoShow = (booking: { seller: { id: string }; bookingId: string }) =>
  handlers()['consultation.session.no_show']!(
    makeEvent(
      'consultation.session.no_show',
      { sessionId: 's', consultationId: 'c', sellerId: booking.seller.id, buyerIds: [], bookingIds: [booking.bookingId] },
      origin,
    ),
    { log },
  );

async function disputedNoShow() {
  const booking = await heldBooking(new Date(Date.now() + 30 * 60_000));
  await markNoShow(booking);
  await handlers()['consultation.booking.disputed']!(
    makeEvent(
      'consultation.booking.disputed',
      {
        bookingId: booking.bookingId,
        sessionId: 's',
        buyerId: booking.buyer.id,
        sellerId: booking.seller.id,
        reason: 'I was there',
        disputedAt: new Date().toISOString(),
      },
      origin,
    ),
    { log },
  );
  return booking;
}

const queue = async (query = '') => (await asAdmin('GET', `/wallets/admin/booking-holds${query}`)).body;
const idsOf = (body: { data: { items: Array<{ bookingId: string }> } }) => body.data.items.map((item) => item.bookingId);

test('an overdue hold waits in the queue until an admin voids it; the void is one audit entry, a retried void none', async () => {
  const entries = await listenForEvents(testServers().amqpUrl, env.events, ['wallet.admin_action.recorded']);
  try {
    const before = (await queue()).data.counts;
    const { bookingId } = await heldBooking(new Date(Date.now() - 2 * HOUR));
    const fresh = await heldBooking(new Date(Date.now() + HOUR));
    // A no-show's capture waiting out its dispute window is on time, however long ago the slot ended.
    const inWindow = await heldBooking(new Date(Date.now() - 2 * HOUR));
    await markNoShow(inWindow);

    const waiting = await queue('?kind=overdue&limit=100');
    expect(waiting.data.counts.overdue).toBe(before.overdue + 1);
    expect(idsOf(waiting)).toContain(bookingId);
    expect(idsOf(waiting)).not.toContain(fresh.bookingId);
    expect(idsOf(waiting)).not.toContain(inWindow.bookingId);
    expect(waiting.data.items.find((item: { bookingId: string }) => item.bookingId === bookingId)).toMatchObject({
      status: 'Held',
      overdue: true,
      disputed: false,
    });
    expect(idsOf(await queue('?kind=disputed&limit=100'))).not.toContain(bookingId);
    // Admins only.
    expect((await call(walletApp().url, 'GET', '/wallets/admin/booking-holds', { token: tokenOf(newUser()) })).status).toBe(403);

    const voidIt = () =>
      asAdmin('POST', `/wallets/booking-holds/${bookingId}/void`, { reason: 'Never held' }, { 'x-request-id': `void-${bookingId}` });
    expect((await voidIt()).status).toBe(200);
    expect((await voidIt()).status).toBe(409);
    expect(idsOf(await queue('?limit=100'))).not.toContain(bookingId);
    expect((await queue()).data.counts.overdue).toBe(before.overdue);

    const entry = await entries.waitFor((e) => e.json.data.targetId === bookingId, 'the void’s audit entry');
    expect(entry.json.data).toMatchObject({
      action: 'booking_hold.void',
      actorId: admin.id,
      targetType: 'booking_hold',
      requestId: `void-${bookingId}`,
      notes: 'Never held',
      before: { status: 'Held', settlement: null },
      after: { status: 'Settling', settlement: 'void', refundMinor: 100_00 },
    });
    await entries.settle();
    expect(entries.seen.filter((e) => e.json.data.targetId === bookingId)).toHaveLength(1);
  } finally {
    await entries.close();
  }
});

test('a disputed no-show waits in the queue until an admin upholds it; the ruling is one audit entry, a refused one none', async () => {
  const entries = await listenForEvents(testServers().amqpUrl, env.events, ['wallet.admin_action.recorded']);
  try {
    const before = (await queue()).data.counts;
    const { bookingId } = await disputedNoShow();
    const waiting = await queue('?kind=disputed&limit=100');
    expect(waiting.data.counts.disputed).toBe(before.disputed + 1);
    // The answer is what the OpenAPI document says it is (the gateway-wide check cannot make a disputed hold).
    const entry = ENDPOINTS.find((endpoint) => endpoint.path === '/wallets/admin/booking-holds')!;
    expect(successBodySchema(entry)!.safeParse(waiting).error?.issues ?? []).toEqual([]);
    expect(waiting.data.items.find((item: { bookingId: string }) => item.bookingId === bookingId)).toMatchObject({
      status: 'Settling',
      settlement: 'capture',
      disputed: true,
      disputeReason: 'I was there',
    });

    expect((await asAdmin('POST', `/wallets/booking-holds/${bookingId}/uphold`, { reason: 'The seller waited' })).status).toBe(200);
    expect((await asAdmin('POST', `/wallets/booking-holds/${bookingId}/uphold`, { reason: 'Again' })).status).toBe(409);
    expect(idsOf(await queue('?kind=disputed&limit=100'))).not.toContain(bookingId);
    expect((await queue()).data.counts.disputed).toBe(before.disputed);

    const recorded = await entries.waitFor((e) => e.json.data.targetId === bookingId, 'the ruling’s audit entry');
    expect(recorded.json.data).toMatchObject({
      action: 'booking_hold.uphold',
      actorId: admin.id,
      notes: 'The seller waited',
      before: { disputed: true },
      after: { disputed: false, resolution: 'capture_upheld' },
    });
    await entries.settle();
    expect(entries.seen.filter((e) => e.json.data.targetId === bookingId)).toHaveLength(1);
  } finally {
    await entries.close();
  }
});

test('bad queue input is the error envelope', async () => {
  expect((await asAdmin('GET', '/wallets/admin/booking-holds?kind=late')).status).toBe(400);
  expect((await asAdmin('GET', '/wallets/admin/payout-requests?status=Completed')).status).toBe(400);
});
