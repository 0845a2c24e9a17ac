import mongoose from 'mongoose';
import { startDisposableBroker, type BrokerHandle } from '@mkt/infra';
import { as, bookingBody, givenOffer, newUser, type ConsultationApp } from './harness';
import { balanceOf, bookingOf, deliverSession, eventually, holdOf, ledgerMatches, startPaidPair, stopPaidPair } from './paid-harness';

// A broker of this file's own, stopped in the middle of the saga (the shared one stays up).
let broker: BrokerHandle;
let pair: ConsultationApp;
const app = () => pair;
beforeAll(async () => {
  broker = await startDisposableBroker();
  pair = await startPaidPair(broker.url);
}, 120_000);
afterAll(async () => {
  await stopPaidPair(pair);
  await broker.stop();
  await mongoose.disconnect();
}, 60_000);

test('with the broker down between the hold and its capture or refund, everything ends once it is back', async () => {
  const offer = await givenOffer(app, { capacity: 5 });
  const buyer = newUser('buyer', { balanceMinor: 1_500_00 });
  const delivered = await as(app, buyer)('POST', '/consultations/bookings', bookingBody(offer));
  const cancelled = await as(app, buyer)('POST', '/consultations/bookings', bookingBody(offer, { startTime: '11:00', endTime: '12:00' }));
  expect([delivered.body.data.status, cancelled.body.data.status]).toEqual(['Confirmed', 'Confirmed']);

  await broker.stopBroker();
  await eventually(
    async () => pair.bus.isConnected() || pair.wallet.bus.isConnected(),
    (up) => !up,
  );
  // The saga goes on without the broker: the HTTP steps answer, the events wait in the outboxes.
  const third = await as(app, buyer)('POST', '/consultations/bookings', bookingBody(offer, { startTime: '13:00', endTime: '14:00' }));
  expect(third.body.data.status).toBe('Confirmed');
  await deliverSession(app, offer.seller, delivered.body.data.sessionId);
  const cancel = await as(app, buyer)('POST', '/consultations/bookings/cancel', {
    bookingId: cancelled.body.data.bookingId,
    refundAmount: 400,
  });
  expect(cancel.body.data.refundStatus).toBe('Pending');
  expect(await balanceOf(offer.seller)).toEqual({ available: 0, held: 0 });
  expect(await balanceOf(buyer)).toEqual({ available: 0, held: 1_500_00 });

  await broker.startBroker();
  await eventually(
    () => bookingOf(cancelled.body.data.bookingId),
    (b) => b?.refundStatus === 'Refunded',
    60_000,
  );
  await eventually(
    () => holdOf(delivered.body.data.bookingId),
    (h) => h?.status === 'Settled',
    60_000,
  );
  expect(await balanceOf(buyer)).toEqual({ available: 400_00, held: 500_00 });
  expect(await balanceOf(offer.seller)).toEqual({ available: 600_00, held: 0 });
  expect(await holdOf(third.body.data.bookingId)).toMatchObject({ status: 'Held' });
  expect(await ledgerMatches(buyer)).toBe(true);
  expect(await ledgerMatches(offer.seller)).toBe(true);
}, 120_000);
