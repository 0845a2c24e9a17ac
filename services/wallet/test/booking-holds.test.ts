import { makeEvent } from '@mkt/contracts';
import { listenForEvents, readQueue, testServers, waitFor } from '@mkt/infra';
import { bookingEventsConsumer } from '../src/events/bookings.consumer';
import { holdOp, PLATFORM_USER_ID, releaseOp, sellerCreditOp } from '../src/domain/booking-holds';
import { settlementOf } from '../src/domain/settlement';
import {
  applyWalletOp,
  balancesOf,
  BookingHold,
  call,
  env,
  givenBalance,
  LedgerEntryModel,
  ledgerMatches,
  log,
  newUser,
  openWallet,
  tokenOf,
  uniqueName,
  useWallet,
  Wallet,
} from './harness';

const TOKEN = 'internal-token-for-the-tests-0123456789';
const walletApp = useWallet({ INTERNAL_API_TOKEN: TOKEN, PLATFORM_FEE_BPS: '1000' });

type User = ReturnType<typeof newUser>;
const holdBody = (buyer: User, seller: User, amountMinor: number, bookingId = uniqueName('bk')) => ({
  bookingId,
  buyerId: buyer.id,
  buyerRef: buyer.ref,
  sellerId: seller.id,
  amountMinor,
  currency: 'ETB',
});
const hold = (body: object, token = TOKEN, headers: Record<string, string> = {}) =>
  call(walletApp().url, 'POST', '/internal/holds', { body, headers: { ...(token ? { 'x-internal-token': token } : {}), ...headers } });
const voidHold = (bookingId: string) =>
  call(walletApp().url, 'POST', `/internal/holds/${bookingId}/void`, { headers: { 'x-internal-token': TOKEN } });

const handlers = () => bookingEventsConsumer(walletApp().parts.holds).handlers;
const completed = (bookingIds: string[], sellerId: string, correlationId?: string) =>
  handlers()['consultation.session.completed']!(
    makeEvent(
      'consultation.session.completed',
      { sessionId: 's', consultationId: 'c', sellerId, buyerIds: [], endedAt: new Date().toISOString(), bookingIds },
      { source: 'consultation', correlationId },
    ),
    { log },
  );
const cancelled = (bookingId: string, buyer: User, seller: User, refundAmountMinor: number) =>
  handlers()['consultation.booking.cancelled']!(
    makeEvent(
      'consultation.booking.cancelled',
      { bookingId, buyerId: buyer.id, sellerId: seller.id, refundAmountMinor },
      { source: 'consultation' },
    ),
    { log },
  );

async function parties(buyerMinor: number) {
  const buyer = newUser();
  const seller = newUser('seller');
  await givenBalance(buyer, buyerMinor);
  await openWallet(seller.id, seller.ref, 'MKT');
  return { buyer, seller };
}

/** Events of one routing key published from now on, found by booking id. */
async function listen(routingKey: string) {
  const events = await listenForEvents(testServers().amqpUrl, env.events, [routingKey]);
  return {
    waitFor: async (bookingId: string) =>
      (await events.waitFor((e) => e.json.data.bookingId === bookingId, `${routingKey} for ${bookingId}`)).json,
    close: events.close,
  };
}

async function platformAvailable(): Promise<number> {
  return (await Wallet.findOne({ userId: PLATFORM_USER_ID }).lean())?.availableMinor ?? 0;
}

describe('POST /internal/holds', () => {
  test('holds the total once, however often it is asked', async () => {
    const { buyer, seller } = await parties(1000_00);
    const body = holdBody(buyer, seller, 400_00);
    const first = await hold(body);
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual({ bookingId: body.bookingId, status: 'Held', settlement: null, amountMinor: 400_00, currency: 'ETB' });
    expect((await hold(body)).body.data.status).toBe('Held');
    expect(await balancesOf(buyer)).toEqual({ available: 600_00, held: 400_00 });
    expect((await hold({ ...body, amountMinor: 1 })).status).toBe(409);
    expect(await ledgerMatches(buyer)).toBe(true);
  });

  test('short of funds is 422 insufficient_funds, the same on a retry, and holds nothing', async () => {
    const { buyer, seller } = await parties(100_00);
    const body = holdBody(buyer, seller, 100_01);
    for (let i = 0; i < 2; i += 1) {
      const res = await hold(body);
      expect(res.status).toBe(422);
      expect(res.body.errors[0].code).toBe('insufficient_funds');
    }
    await givenBalance(buyer, 50_00); // money arriving later does not turn a refusal into a hold
    expect((await hold(body)).status).toBe(422);
    expect(await balancesOf(buyer)).toEqual({ available: 150_00, held: 0 });
  });

  test('needs the service credential: none, a wrong one or a user token is 401', async () => {
    const { buyer, seller } = await parties(100_00);
    const body = holdBody(buyer, seller, 10_00);
    expect((await hold(body, '')).status).toBe(401);
    expect((await hold(body, `${TOKEN}x`)).status).toBe(401);
    expect((await hold(body, 'short')).status).toBe(401);
    expect((await call(walletApp().url, 'POST', '/internal/holds', { body, headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(
      401,
    );
    expect(await balancesOf(buyer)).toEqual({ available: 100_00, held: 0 });
    expect((await hold({ ...body, amountMinor: -5 })).status).toBe(400);
  });

  test('50 racing holds of different bookings never overdraw the wallet', async () => {
    const { buyer, seller } = await parties(1000_00);
    const results = await Promise.all(Array.from({ length: 50 }, () => hold(holdBody(buyer, seller, 30_00))));
    expect(results.filter((r) => r.status === 200)).toHaveLength(33);
    expect(results.filter((r) => r.status === 422)).toHaveLength(17);
    expect(await balancesOf(buyer)).toEqual({ available: 10_00, held: 990_00 });
    expect(await ledgerMatches(buyer)).toBe(true);
  });
});

describe('settling a hold', () => {
  test('a completed session captures for the seller, less the platform fee, exactly once', async () => {
    const captured = await listen('wallet.booking_payment.captured');
    const { buyer, seller } = await parties(500_00);
    const body = holdBody(buyer, seller, 300_00);
    await hold(body);
    const platformBefore = await platformAvailable();
    await completed([body.bookingId, 'bk_free_booking_without_hold'], seller.id);
    await completed([body.bookingId], seller.id);
    await cancelled(body.bookingId, buyer, seller, 300_00); // too late: the first decision stands
    expect(await balancesOf(buyer)).toEqual({ available: 200_00, held: 0 });
    expect(await balancesOf(seller)).toEqual({ available: 270_00, held: 0 });
    expect((await platformAvailable()) - platformBefore).toBe(30_00);
    const record = await BookingHold.findById(body.bookingId).lean();
    expect(record).toMatchObject({ status: 'Settled', settlement: { kind: 'capture', captureMinor: 300_00, feeMinor: 30_00 } });
    expect(await ledgerMatches(seller)).toBe(true);
    expect(await ledgerMatches(buyer)).toBe(true);
    const event = await captured.waitFor(body.bookingId);
    expect(event).toMatchObject({
      type: 'wallet.booking_payment.captured',
      data: { sellerId: seller.id, amountMinor: 300_00, feeMinor: 30_00 },
    });
    await captured.close();
  });

  test('a capture paid with money the seller transferred to the buyer says so (sellerFundedMinor); one paid with the buyer’s own says 0', async () => {
    const captured = await listen('wallet.booking_payment.captured');
    const { buyer: puppet, seller } = await parties(0);
    await givenBalance(seller, 1_00);
    const sent = await call(walletApp().url, 'POST', '/v1/wallet/transfers', {
      token: tokenOf(seller),
      body: { toUserId: puppet.id, amount: 1, currency: 'ETB' },
    });
    expect(sent.status).toBe(200);
    const farmed = holdBody(puppet, seller, 1);
    expect((await hold(farmed)).body.data).toMatchObject({ status: 'Held' });
    const { buyer: customer } = await parties(500_00);
    const paid = holdBody(customer, seller, 500_00);
    await hold(paid);
    await completed([farmed.bookingId, paid.bookingId], seller.id);
    expect((await captured.waitFor(farmed.bookingId)).data).toMatchObject({ amountMinor: 1, sellerFundedMinor: 1 });
    expect((await captured.waitFor(paid.bookingId)).data).toMatchObject({ amountMinor: 500_00, sellerFundedMinor: 0 });
    await captured.close();
  });

  test('a cancellation refunds what was asked (never more than held), the rest goes to the seller', async () => {
    const { buyer, seller } = await parties(500_00);
    const body = holdBody(buyer, seller, 200_00);
    await hold(body);
    await cancelled(body.bookingId, buyer, seller, 150_00);
    await cancelled(body.bookingId, buyer, seller, 150_00);
    expect(await balancesOf(buyer)).toEqual({ available: 450_00, held: 0 });
    expect(await balancesOf(seller)).toEqual({ available: 45_00, held: 0 }); // 50 less the 10 % fee
    const full = holdBody(buyer, seller, 100_00);
    await hold(full);
    await cancelled(full.bookingId, buyer, seller, 999_00);
    expect(await balancesOf(buyer)).toEqual({ available: 450_00, held: 0 });
    const record = await BookingHold.findById(full.bookingId).lean();
    expect(record!.settlement).toMatchObject({ kind: 'cancel', refundMinor: 100_00, captureMinor: 0 });
    expect(await ledgerMatches(buyer)).toBe(true);
    expect(await ledgerMatches(seller)).toBe(true);
  });

  test('the same settlement handled several times at once moves the money once', async () => {
    const { buyer, seller } = await parties(500_00);
    const body = holdBody(buyer, seller, 200_00);
    await hold(body);
    await Promise.all([
      cancelled(body.bookingId, buyer, seller, 50_00),
      cancelled(body.bookingId, buyer, seller, 50_00),
      cancelled(body.bookingId, buyer, seller, 50_00),
      walletApp().parts.holds.resume(new Date(Date.now() + 60_000)),
    ]);
    await walletApp().parts.holds.resume(new Date(Date.now() + 60_000));
    expect(await balancesOf(buyer)).toEqual({ available: 350_00, held: 0 });
    expect(await balancesOf(seller)).toEqual({ available: 135_00, held: 0 }); // 150 less the 10 % fee
    expect(await ledgerMatches(buyer)).toBe(true);
    expect(await ledgerMatches(seller)).toBe(true);
  });

  test('a settlement’s op ids live in the ledger, not on the wallets: its steps replayed long after change nothing', async () => {
    const { buyer, seller } = await parties(500_00);
    const body = holdBody(buyer, seller, 100_00);
    await hold(body);
    await completed([body.bookingId], seller.id);
    const record = (await walletApp().parts.holds.find(body.bookingId))!;
    const buyerWallet = (await Wallet.findOne({ userId: buyer.id }).lean())!;
    const sellerWallet = (await Wallet.findOne({ userId: seller.id }).lean())!;
    for (const wallet of [buyerWallet, sellerWallet]) expect(wallet).toMatchObject({ appliedOps: false, inflight: [] });
    // A stalled run of every step, arriving long after (no hour, no forgetting: the ledger keeps the ids).
    const replays = [
      applyWalletOp(buyerWallet._id, holdOp(record)),
      applyWalletOp(buyerWallet._id, releaseOp(record, record.settlement!)),
      applyWalletOp(sellerWallet._id, sellerCreditOp(record, record.settlement!, walletApp().config.WALLET_BALANCE_CEILING)),
    ];
    for (const outcome of await Promise.all(replays)) expect(outcome).toEqual({ kind: 'repeat' });
    expect(await balancesOf(buyer)).toEqual({ available: 400_00, held: 0 });
    expect(await balancesOf(seller)).toEqual({ available: 90_00, held: 0 });
    expect(await LedgerEntryModel.countDocuments({ reference: body.bookingId })).toBe(4); // hold, release, capture, fee
    expect(await ledgerMatches(buyer)).toBe(true);
    expect(await ledgerMatches(seller)).toBe(true);
  });

  test('the split of a settlement always sums to the hold; the fee never overflows', () => {
    for (const [kind, amount, refund, bps] of [
      ['capture', 999, 0, 250],
      ['cancel', 1000, 333, 1234],
      ['cancel', 10, 50, 0],
      ['void', 77, 0, 10_000],
      ['capture', 1_000_000_000_000_000, 0, 10_000],
    ] as const) {
      const s = settlementOf(kind, amount, refund, bps);
      expect(s.refundMinor + s.captureMinor).toBe(amount);
      expect(s.feeMinor).toBeLessThanOrEqual(s.captureMinor);
      expect(Number.isSafeInteger(s.feeMinor)).toBe(true);
    }
    expect(settlementOf('capture', 1_000_000_000_000_000, 0, 10_000).feeMinor).toBe(1_000_000_000_000_000);
  });
});

describe('voiding and faults', () => {
  test('a void before the hold arrives makes the late hold a no-op; a void of a held booking gives it back', async () => {
    const { buyer, seller } = await parties(300_00);
    const late = holdBody(buyer, seller, 100_00);
    expect((await voidHold(late.bookingId)).body.data.status).toBe('Voided');
    const res = await hold(late);
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe('Voided');
    expect(await balancesOf(buyer)).toEqual({ available: 300_00, held: 0 });

    const held = holdBody(buyer, seller, 120_00);
    await hold(held);
    const voided = await voidHold(held.bookingId);
    expect(voided.body.data).toMatchObject({ status: 'Settled', settlement: 'void' });
    expect((await voidHold(held.bookingId)).status).toBe(200);
    expect(await balancesOf(buyer)).toEqual({ available: 300_00, held: 0 });
    expect(await balancesOf(seller)).toEqual({ available: 0, held: 0 });
    expect(await ledgerMatches(buyer)).toBe(true);
  });

  test('a crash between applying the hold and recording it: the retry records it, held once', async () => {
    const { buyer, seller } = await parties(300_00);
    const body = holdBody(buyer, seller, 100_00);
    const wallet = await openWallet(buyer.id, buyer.ref, 'MKT');
    await BookingHold.create({
      _id: body.bookingId,
      buyerId: buyer.id,
      buyerWalletId: wallet._id,
      sellerId: seller.id,
      amountMinor: 100_00,
      currency: 'ETB',
      status: 'Pending',
      hold: 'pending',
    });
    await applyWalletOp(wallet._id, {
      opId: `booking:${body.bookingId}:hold`,
      type: 'booking_hold',
      availableDeltaMinor: -100_00,
      heldDeltaMinor: 100_00,
      reference: body.bookingId,
    });
    // ...and the process dies here. The consultation asks again:
    expect((await hold(body)).body.data.status).toBe('Held');
    expect(await balancesOf(buyer)).toEqual({ available: 200_00, held: 100_00 });
    // Its op id is a ledger key: one entry, nothing left on the wallet (a repeat is a no-op).
    expect(await LedgerEntryModel.countDocuments({ _id: `booking:${body.bookingId}:hold` })).toBe(1);
    expect((await Wallet.findById(wallet._id).lean())!.inflight).toEqual([]);
  });

  test('a hold applied for a booking given up meanwhile is released by the sweep, once', async () => {
    const { buyer, seller } = await parties(300_00);
    const body = holdBody(buyer, seller, 100_00);
    const wallet = await openWallet(buyer.id, buyer.ref, 'MKT');
    await BookingHold.create({
      _id: body.bookingId,
      buyerId: buyer.id,
      buyerWalletId: wallet._id,
      sellerId: seller.id,
      amountMinor: 100_00,
      currency: 'ETB',
      status: 'Rejected',
      hold: 'none',
    });
    await applyWalletOp(wallet._id, {
      opId: `booking:${body.bookingId}:hold`,
      type: 'booking_hold',
      availableDeltaMinor: -100_00,
      heldDeltaMinor: 100_00,
      reference: body.bookingId,
    });
    const later = new Date(Date.now() + 60_000);
    await walletApp().parts.holds.resume(later);
    await walletApp().parts.holds.resume(later);
    expect(await balancesOf(buyer)).toEqual({ available: 300_00, held: 0 });
    expect(await ledgerMatches(buyer)).toBe(true);
  });

  test('a settlement interrupted after its first step is finished by the sweep, once, under the booking’s correlation id', async () => {
    const captured = await listen('wallet.booking_payment.captured');
    const { buyer, seller } = await parties(300_00);
    const body = holdBody(buyer, seller, 100_00);
    await hold(body, TOKEN, { 'x-correlation-id': 'booking-request-3' });
    const holds = walletApp().parts.holds;
    // Decide and apply only the buyer's step, as a process that died before the seller's credit.
    await BookingHold.updateOne(
      { _id: body.bookingId },
      {
        $set: {
          status: 'Settling',
          settlement: { ...settlementOf('capture', 100_00, 0, 0), decidedAt: new Date() },
          release: 'pending',
          credit: 'pending',
          fee: 'none',
        },
      },
    );
    const wallet = await openWallet(buyer.id, buyer.ref, 'MKT');
    await applyWalletOp(wallet._id, {
      opId: `booking:${body.bookingId}:release`,
      type: 'booking_settle',
      availableDeltaMinor: 0,
      heldDeltaMinor: -100_00,
      reference: body.bookingId,
    });
    const later = new Date(Date.now() + 60_000);
    await holds.resume(later);
    await holds.resume(later);
    expect(await balancesOf(buyer)).toEqual({ available: 200_00, held: 0 });
    expect(await balancesOf(seller)).toEqual({ available: 100_00, held: 0 });
    expect((await BookingHold.findById(body.bookingId).lean())!.status).toBe('Settled');
    expect(await ledgerMatches(buyer)).toBe(true);
    expect(await ledgerMatches(seller)).toBe(true);
    // A decision stored without its own correlation id (as before this release): the booking's.
    expect((await captured.waitFor(body.bookingId)).correlationId).toBe('booking-request-3');
    await captured.close();
  });
});

describe('a capture waits for the booked slot’s end', () => {
  const HOUR = 3_600_000;

  test('a session ended early is decided at once but paid only once the slot is over, by the sweep', async () => {
    const captured = await listen('wallet.booking_payment.captured');
    const { buyer, seller } = await parties(500_00);
    const endsAt = new Date(Date.now() + HOUR);
    const body = { ...holdBody(buyer, seller, 300_00), endsAt: endsAt.toISOString() };
    expect((await hold(body, TOKEN, { 'x-correlation-id': 'booking-request-1' })).body.data.status).toBe('Held');
    await completed([body.bookingId], seller.id, 'session-end-1');
    // Decided: a capture. Nothing moves yet, and nothing else can be decided meanwhile.
    expect(await BookingHold.findById(body.bookingId).lean()).toMatchObject({
      status: 'Settling',
      settlement: { kind: 'capture' },
      dueAt: endsAt,
      correlationId: 'booking-request-1',
    });
    await cancelled(body.bookingId, buyer, seller, 300_00);
    await walletApp().parts.holds.resume(new Date(Date.now() + 60_000));
    expect(await balancesOf(buyer)).toEqual({ available: 200_00, held: 300_00 });
    expect(await balancesOf(seller)).toEqual({ available: 0, held: 0 });

    await walletApp().parts.holds.resume(new Date(endsAt.getTime() + 60_000));
    expect(await balancesOf(buyer)).toEqual({ available: 200_00, held: 0 });
    expect(await balancesOf(seller)).toEqual({ available: 270_00, held: 0 });
    expect((await BookingHold.findById(body.bookingId).lean())!.status).toBe('Settled');
    const event = await captured.waitFor(body.bookingId);
    expect(event).toMatchObject({ correlationId: 'session-end-1', data: { amountMinor: 300_00 } });
    expect(await ledgerMatches(buyer)).toBe(true);
    expect(await ledgerMatches(seller)).toBe(true);
    await captured.close();
  });
});

test('a settlement the sweep cannot carry out is touched, so it waits its turn and cannot hold the others back', async () => {
  const { buyer, seller } = await parties(500_00);
  const body = holdBody(buyer, seller, 100_00);
  expect((await hold(body)).body.data.status).toBe('Held');
  // The seller's wallet is gone: the credit fails every time (as at the balance ceiling).
  await Wallet.deleteOne({ userId: seller.id });
  await expect(completed([body.bookingId], seller.id)).rejects.toThrow('Seller wallet');
  const before = (await BookingHold.findById(body.bookingId).lean())!;
  await walletApp().parts.holds.resume(new Date(Date.now() + 60_000));
  const after = (await BookingHold.findById(body.bookingId).lean())!;
  expect(after).toMatchObject({ status: 'Settling', resumeFailures: 1 });
  expect(after.updatedAt.getTime()).toBeGreaterThan(before.updatedAt.getTime());
});

describe('an admin voids a hold by hand', () => {
  const admin = newUser('admin');
  const as = (user: User) => ({
    get: (bookingId: string) => call(walletApp().url, 'GET', `/wallets/booking-holds/${bookingId}`, { token: tokenOf(user) }),
    void: (bookingId: string, body: object = { reason: 'The session never took place' }) =>
      call(walletApp().url, 'POST', `/wallets/booking-holds/${bookingId}/void`, { token: tokenOf(user), body }),
  });

  test('a Held hold goes back to the buyer in full, on the record and in a refund event that says so', async () => {
    const refunded = await listen('wallet.booking_refund.completed');
    const { buyer, seller } = await parties(500_00);
    const body = holdBody(buyer, seller, 200_00);
    await hold(body, TOKEN, { 'x-correlation-id': 'booking-request-2' });
    const res = await as(admin).void(body.bookingId);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      bookingId: body.bookingId,
      status: 'Settled',
      settlement: 'void',
      amountMinor: 200_00,
      buyerId: buyer.id,
      sellerId: seller.id,
      endsAt: null,
      history: [{ action: 'void', by: admin.id, at: expect.any(String), reason: 'The session never took place' }],
    });
    expect((await as(admin).get(body.bookingId)).body.data).toEqual(res.body.data);
    expect(await balancesOf(buyer)).toEqual({ available: 500_00, held: 0 });
    expect(await balancesOf(seller)).toEqual({ available: 0, held: 0 });
    const event = await refunded.waitFor(body.bookingId);
    expect(event.data).toEqual({
      bookingId: body.bookingId,
      buyerId: buyer.id,
      sellerId: seller.id,
      refundAmountMinor: 200_00,
      capturedAmountMinor: 0,
      currency: 'ETB',
      voidedByAdmin: true,
    });
    const again = await as(admin).void(body.bookingId);
    expect(again.status).toBe(409);
    expect(again.body.errors[0].code).toBe('invalid_state');
    await completed([body.bookingId], seller.id); // too late: the void stands
    expect(await balancesOf(seller)).toEqual({ available: 0, held: 0 });
    expect(await ledgerMatches(buyer)).toBe(true);
    await refunded.close();
  });

  test('a capture decided but not carried out (waiting for its slot’s end) is voided: all back to the buyer, once; the sweep moves nothing after', async () => {
    const { buyer, seller } = await parties(500_00);
    const endsAt = new Date(Date.now() + 3_600_000);
    const body = { ...holdBody(buyer, seller, 100_00), endsAt: endsAt.toISOString() };
    await hold(body);
    await completed([body.bookingId], seller.id);
    expect((await as(admin).get(body.bookingId)).body.data).toMatchObject({
      status: 'Settling',
      settlement: 'capture',
      dueAt: body.endsAt,
    });
    const res = await as(admin).void(body.bookingId);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      status: 'Settled',
      settlement: 'void',
      dueAt: null,
      history: [{ action: 'void', by: admin.id }],
    });
    await walletApp().parts.holds.resume(new Date(endsAt.getTime() + 60_000));
    expect(await balancesOf(buyer)).toEqual({ available: 500_00, held: 0 });
    expect(await balancesOf(seller)).toEqual({ available: 0, held: 0 });
    expect((await as(admin).void(body.bookingId)).status).toBe(409);
    expect(await ledgerMatches(buyer)).toBe(true);
  });

  test('a capture carried out is 409, and stands', async () => {
    const { buyer, seller } = await parties(500_00);
    const body = holdBody(buyer, seller, 100_00);
    await hold(body);
    await completed([body.bookingId], seller.id);
    const res = await as(admin).void(body.bookingId);
    expect(res.status).toBe(409);
    expect(res.body.errors[0].code).toBe('invalid_state');
    expect(await balancesOf(seller)).toEqual({ available: 90_00, held: 0 });
  });

  test('race: an admin’s void against the settlement sweep of a due capture — one wins, the money moves exactly once', async () => {
    const endsAt = new Date(Date.now() + 3_600_000);
    const cases = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const { buyer, seller } = await parties(100_00);
        const body = { ...holdBody(buyer, seller, 100_00), endsAt: endsAt.toISOString() };
        await hold(body);
        await completed([body.bookingId], seller.id);
        return { buyer, seller, body };
      }),
    );
    const later = new Date(endsAt.getTime() + 60_000);
    const voids = await Promise.all([
      ...cases.map(({ body }) => as(admin).void(body.bookingId)),
      walletApp().parts.holds.resume(later),
      walletApp().parts.holds.resume(later),
    ]);
    await walletApp().parts.holds.resume(later);
    for (const [i, { buyer, seller, body }] of cases.entries()) {
      const status = (voids[i] as { status: number }).status;
      expect([200, 409]).toContain(status);
      const record = (await BookingHold.findById(body.bookingId).lean())!;
      expect(record.status).toBe('Settled');
      if (status === 200) {
        expect(record.settlement).toMatchObject({ kind: 'void', byAdmin: true });
        expect(await balancesOf(buyer)).toEqual({ available: 100_00, held: 0 });
        expect(await balancesOf(seller)).toEqual({ available: 0, held: 0 });
      } else {
        expect(record.settlement).toMatchObject({ kind: 'capture' });
        expect(await balancesOf(buyer)).toEqual({ available: 0, held: 0 });
        expect(await balancesOf(seller)).toEqual({ available: 90_00, held: 0 });
      }
      expect(await ledgerMatches(buyer)).toBe(true);
      expect(await ledgerMatches(seller)).toBe(true);
    }
  });

  test('attack: neither the buyer nor the seller can void (or read) a hold; unknown is 404; the reason is required', async () => {
    const { buyer, seller } = await parties(500_00);
    const body = holdBody(buyer, seller, 100_00);
    await hold(body);
    for (const user of [buyer, seller]) {
      const res = await as(user).void(body.bookingId);
      expect(res.status).toBe(403);
      expect(res.body.errors[0].code).toBe('forbidden');
      expect((await as(user).get(body.bookingId)).status).toBe(403);
    }
    expect((await as(buyer).void('bk_does_not_exist')).status).toBe(403);
    expect((await as(admin).void('bk_does_not_exist')).status).toBe(404);
    expect((await as(admin).get('bk_does_not_exist')).status).toBe(404);
    expect((await as(admin).void(body.bookingId, {})).status).toBe(400);
    expect((await as(admin).void(body.bookingId, { reason: '   ' })).status).toBe(400);
    expect((await as(admin).void(body.bookingId, { reason: 'x'.repeat(501) })).status).toBe(400);
    expect(await balancesOf(buyer)).toEqual({ available: 400_00, held: 100_00 });
    expect((await as(admin).get(body.bookingId)).body.data).toMatchObject({ status: 'Held', history: [] });
  });
});

describe('a no-show: the capture waits out the dispute window; a disputed one waits for an admin', () => {
  const HOUR = 3_600_000;
  const admin = newUser('admin');
  const adminCall = (path: string, body?: object) => call(walletApp().url, body ? 'POST' : 'GET', path, { token: tokenOf(admin), body });
  const noShow = (bookingIds: string[], sellerId: string) =>
    handlers()['consultation.session.no_show']!(
      makeEvent(
        'consultation.session.no_show',
        { sessionId: 's', consultationId: 'c', sellerId, buyerIds: [], bookingIds },
        { source: 'consultation' },
      ),
      { log },
    );
  const disputed = (bookingId: string, buyer: User, seller: User) =>
    handlers()['consultation.booking.disputed']!(
      makeEvent(
        'consultation.booking.disputed',
        { bookingId, sessionId: 's', buyerId: buyer.id, sellerId: seller.id, reason: 'I was there', disputedAt: new Date().toISOString() },
        { source: 'consultation' },
      ),
      { log },
    );

  async function markedNoShow() {
    const { buyer, seller } = await parties(100_00);
    // Marked within the slot (after its grace): the window runs from the slot's end.
    const endsAt = new Date(Date.now() + 30 * 60_000);
    const body = { ...holdBody(buyer, seller, 100_00), endsAt: endsAt.toISOString() };
    await hold(body);
    await noShow([body.bookingId], seller.id);
    return { buyer, seller, body, endsAt };
  }

  test('decided at once, carried out only a day after the slot’s end (the window an admin can still void in)', async () => {
    const { buyer, seller, body, endsAt } = await markedNoShow();
    const record = (await BookingHold.findById(body.bookingId).lean())!;
    expect(record).toMatchObject({ status: 'Settling', settlement: { kind: 'capture', noShow: true } });
    expect(record.dueAt!.getTime()).toBe(endsAt.getTime() + 24 * HOUR);
    await walletApp().parts.holds.resume(new Date(endsAt.getTime() + 23 * HOUR));
    expect(await balancesOf(seller)).toEqual({ available: 0, held: 0 });
    await walletApp().parts.holds.resume(new Date(endsAt.getTime() + 25 * HOUR));
    expect(await balancesOf(seller)).toEqual({ available: 90_00, held: 0 });
    expect(await balancesOf(buyer)).toEqual({ available: 0, held: 0 });
  });

  test('disputed: the capture waits past its window until an admin upholds it (then it goes on); a hold not disputed cannot be upheld', async () => {
    const { buyer, seller, body, endsAt } = await markedNoShow();
    await disputed(body.bookingId, buyer, seller);
    await disputed(body.bookingId, buyer, seller); // a repeat changes nothing
    const seen = await adminCall(`/wallets/booking-holds/${body.bookingId}`);
    expect(seen.body.data).toMatchObject({
      status: 'Settling',
      settlement: 'capture',
      disputed: true,
      dispute: { reason: 'I was there', resolution: null, resolvedBy: null },
    });
    const afterWindow = new Date(endsAt.getTime() + 48 * HOUR);
    await walletApp().parts.holds.resume(afterWindow);
    expect(await balancesOf(seller)).toEqual({ available: 0, held: 0 });
    expect(await balancesOf(buyer)).toEqual({ available: 0, held: 100_00 });

    const upheld = await adminCall(`/wallets/booking-holds/${body.bookingId}/uphold`, { reason: 'The seller waited' });
    expect(upheld.status).toBe(200);
    expect(upheld.body.data).toMatchObject({
      disputed: false,
      dispute: { reason: 'I was there', resolution: 'capture_upheld', resolvedBy: admin.id, resolutionReason: 'The seller waited' },
    });
    expect((await adminCall(`/wallets/booking-holds/${body.bookingId}/uphold`, {})).status).toBe(400);
    expect((await adminCall(`/wallets/booking-holds/${body.bookingId}/uphold`, { reason: 'The seller waited' })).status).toBe(409);
    await walletApp().parts.holds.resume(afterWindow);
    expect(await balancesOf(seller)).toEqual({ available: 90_00, held: 0 });
    expect(await ledgerMatches(buyer)).toBe(true);
  });

  test('disputed, then voided by the admin: all back to the buyer, once, whatever the sweep does', async () => {
    const { buyer, seller, body, endsAt } = await markedNoShow();
    await disputed(body.bookingId, buyer, seller);
    const voided = await adminCall(`/wallets/booking-holds/${body.bookingId}/void`, { reason: 'The buyer joined; the seller did not' });
    expect(voided.status).toBe(200);
    expect(voided.body.data).toMatchObject({ status: 'Settled', settlement: 'void', disputed: false });
    await walletApp().parts.holds.resume(new Date(endsAt.getTime() + 48 * HOUR));
    expect(await balancesOf(buyer)).toEqual({ available: 100_00, held: 0 });
    expect(await balancesOf(seller)).toEqual({ available: 0, held: 0 });
    expect(await ledgerMatches(buyer)).toBe(true);
  });
});

describe('a booking event from another service than consultation', () => {
  test('a cancellation whose source is not consultation is refused through the broker: the hold stays, the refund waits for the real one', async () => {
    const { buyer, seller } = await parties(1000_00);
    const body = holdBody(buyer, seller, 400_00);
    expect((await hold(body)).status).toBe(200);
    const data = { bookingId: body.bookingId, buyerId: buyer.id, sellerId: seller.id, refundAmountMinor: 400_00 };
    const forged = makeEvent('consultation.booking.cancelled', data, { source: 'crm' });
    await walletApp().bus.consume(bookingEventsConsumer(walletApp().parts.holds));
    const deadLetters = await readQueue(testServers().amqpUrl, env.queue('wallet.bookings.dlq'));
    try {
      await walletApp().bus.publish(forged);
      const kept = await deadLetters.waitFor((message) => message.json?.id === forged.id, 'the forged cancellation');
      expect(kept.headers['x-refused']).toBe('source');
    } finally {
      await deadLetters.close();
    }
    expect(await balancesOf(buyer)).toEqual({ available: 600_00, held: 400_00 });
    expect((await BookingHold.findById(body.bookingId).lean())?.status).toBe('Held');

    await walletApp().bus.publish(makeEvent('consultation.booking.cancelled', data, { source: 'consultation' }));
    await waitFor(() => balancesOf(buyer), { what: 'the refund of the real cancellation', until: (b) => b.held === 0 });
    expect(await balancesOf(buyer)).toEqual({ available: 1000_00, held: 0 });
    expect(await ledgerMatches(buyer)).toBe(true);
  });
});
