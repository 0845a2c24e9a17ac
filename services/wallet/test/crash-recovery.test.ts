import { randomUUID } from 'node:crypto';
import { RateLimited } from '@mkt/kit/domain';
import { WindowedCounter } from '@mkt/kit/db';
import { Limits as WalletLimits } from '../src/application/limits.use-cases';
import { releaseOp } from '../src/domain/booking-holds';
import type { LimitSettings } from '../src/domain/limits';
import { settlementOf } from '../src/domain/settlement';
import { transferCreditOp, transferDebitOp } from '../src/domain/transfers';
import {
  applyOp,
  balancesOf,
  BookingHold,
  call,
  givenBalance,
  LedgerEntryModel,
  ledgerMatches,
  newUser,
  openWallet,
  Payout,
  tokenOf,
  TopUp,
  Transfer,
  Usage,
  useWallet,
  Wallet,
} from './harness';

const walletApp = useWallet();
/** The wallet's limits over its `usage_counters`, with the windows a test gives. */
class Limits extends WalletLimits {
  constructor(settings: LimitSettings) {
    super(settings, new WindowedCounter(Usage));
  }
}
const admin = newUser('admin');
const later = () => new Date(Date.now() + 120_000);

const payoutBody = { amount: '150.00', bankCode: 'CBE', accountNumber: '1000123456789', accountName: 'Abebe Kebede', reason: 'Earnings' };

async function pendingPayout() {
  const user = newUser();
  await givenBalance(user, 500_00);
  const res = await call(walletApp().url, 'POST', `/wallets/users/${user.ref}/payout-request`, { token: tokenOf(user), body: payoutBody });
  expect(res.status).toBe(200);
  return { user, id: res.body.data.id as string, reference: res.body.data.referenceId as string };
}

const move = (reference: string, action: string) =>
  call(walletApp().url, 'POST', `/wallets/payout-requests/${reference}/${action}`, { token: tokenOf(admin), body: {} });

describe('payouts resume after a crash between steps', () => {
  test('died after the hold reached the wallet, before the payout recorded it: the sweep records it, held once', async () => {
    const { user, id } = await pendingPayout();
    await Payout.updateOne({ _id: id }, { $set: { hold: 'pending' } }); // the record as the dead process left it
    await walletApp().parts.payouts.resume(later());
    await walletApp().parts.payouts.resume(later());
    expect((await Payout.findById(id).lean())?.hold).toBe('done');
    expect(await balancesOf(user)).toEqual({ available: 350_00, held: 150_00 });
    expect(await ledgerMatches(user)).toBe(true);
  });

  test('died after a reject was written, before the hold went back: the sweep releases it, once', async () => {
    const { user, id } = await pendingPayout();
    // What `move` writes first (status and `finish: pending` in one write), then the process dies.
    await Payout.updateOne({ _id: id, status: 'Pending' }, { $set: { status: 'Rejected', finish: 'pending', processedAt: new Date() } });
    expect(await balancesOf(user)).toEqual({ available: 350_00, held: 150_00 });
    await walletApp().parts.payouts.resume(later());
    await walletApp().parts.payouts.resume(later());
    expect((await Payout.findById(id).lean())?.finish).toBe('done');
    expect(await balancesOf(user)).toEqual({ available: 500_00, held: 0 });
    expect(await ledgerMatches(user)).toBe(true);
  });

  test('died after the pay-out reached the wallet, before the payout recorded it: the repeat changes nothing', async () => {
    const { user, id, reference } = await pendingPayout();
    for (const action of ['approve', 'process', 'complete']) expect((await move(reference, action)).status).toBe(200);
    expect(await balancesOf(user)).toEqual({ available: 350_00, held: 0 });
    await Payout.updateOne({ _id: id }, { $set: { finish: 'pending' } });
    await walletApp().parts.payouts.resume(later());
    expect((await Payout.findById(id).lean())?.finish).toBe('done');
    expect(await balancesOf(user)).toEqual({ available: 350_00, held: 0 });
    expect(await ledgerMatches(user)).toBe(true);
  });
});

describe('top-ups are credited after a crash in their completion', () => {
  async function processingTopUp() {
    const user = newUser();
    const res = await call(walletApp().url, 'POST', `/wallets/users/${user.ref}/topup`, {
      token: tokenOf(user),
      body: { amount: 150.5, paymentMethod: 'Chapa', redirectUrl: 'https://shop.example/after-pay' },
    });
    expect(res.status).toBe(200);
    return { user, referenceId: res.body.data.referenceId as string };
  }

  test('died after Completed was written (webhook or checkout), before the credit: the sweep credits it, once', async () => {
    const { user, referenceId } = await processingTopUp();
    // The completing write (status and `credit: pending` together), then the process dies.
    await TopUp.updateOne(
      { referenceId, status: 'Processing' },
      { $set: { status: 'Completed', completedAt: new Date(), credit: 'pending' } },
    );
    expect(await balancesOf(user)).toEqual({ available: 0, held: 0 });
    await walletApp().parts.topUps.reconcile(later());
    await walletApp().parts.topUps.reconcile(later());
    expect((await TopUp.findOne({ referenceId }).lean())?.credit).toBe('done');
    expect(await balancesOf(user)).toEqual({ available: 150_50, held: 0 });
    expect(await ledgerMatches(user)).toBe(true);
    // A late report of the same payment (the webhook again) credits nothing more.
    const topUp = (await TopUp.findOne({ referenceId }).lean())!;
    await walletApp().parts.topUps.complete(topUp._id, 'late-webhook');
    expect(await balancesOf(user)).toEqual({ available: 150_50, held: 0 });
  });

  test('died after the credit reached the wallet, before the top-up recorded it: the sweep records it, credited once', async () => {
    const { user, referenceId } = await processingTopUp();
    const topUp = (await TopUp.findOne({ referenceId }).lean())!;
    await walletApp().parts.topUps.complete(topUp._id, 'checkout');
    expect(await balancesOf(user)).toEqual({ available: 150_50, held: 0 });
    await TopUp.updateOne({ referenceId }, { $set: { credit: 'pending' } }); // the record as the dead process left it
    await walletApp().parts.topUps.reconcile(later());
    expect((await TopUp.findOne({ referenceId }).lean())?.credit).toBe('done');
    expect(await balancesOf(user)).toEqual({ available: 150_50, held: 0 });
    expect(await LedgerEntryModel.countDocuments({ _id: `topup:${topUp._id}:credit` })).toBe(1);
    expect((await Wallet.findOne({ userId: user.id }).lean())!.inflight).toEqual([]);
    expect(await ledgerMatches(user)).toBe(true);
  });
});

describe('weekly and monthly limit windows (UTC calendar)', () => {
  const at = (iso: string) => new Date(iso);

  test('the weekly window ends on Monday 00:00 UTC: full on Sunday night, open again a minute later', async () => {
    const limits = new Limits({ daily: 100, weekly: 2, monthly: 100 });
    const userId = newUser().id;
    await limits.reserve(userId, at('2031-08-25T08:00:00Z')); // Monday of that ISO week
    await limits.reserve(userId, at('2031-08-31T23:58:00Z')); // its Sunday
    const refused = limits.reserve(userId, at('2031-08-31T23:59:00Z'));
    await expect(refused).rejects.toBeInstanceOf(RateLimited);
    await expect(refused).rejects.toMatchObject({ status: 429 });
    // Refused: nothing counted in the day's window either.
    expect((await limits.stats(userId, at('2031-08-31T23:59:00Z'))).daily.count).toBe(1);
    await limits.reserve(userId, at('2031-09-01T00:00:00Z')); // Monday: a new week
    const stats = await limits.stats(userId, at('2031-09-01T00:00:00Z'));
    expect(stats.weekly).toEqual({ count: 1, limit: 2, remaining: 1 });
    expect(stats.monthly.count).toBe(1); // September is a new month too
  });

  test('the monthly window ends on the 1st 00:00 UTC, even inside an ISO week', async () => {
    const limits = new Limits({ daily: 100, weekly: 100, monthly: 2 });
    const userId = newUser().id;
    await limits.reserve(userId, at('2031-01-01T00:00:00Z'));
    await limits.reserve(userId, at('2031-01-31T23:00:00Z'));
    await expect(limits.reserve(userId, at('2031-01-31T23:59:59Z'))).rejects.toBeInstanceOf(RateLimited);
    await limits.reserve(userId, at('2031-02-01T00:00:00Z')); // Saturday: same week, new month
    const stats = await limits.stats(userId, at('2031-02-01T00:00:00Z'));
    expect(stats.monthly).toEqual({ count: 1, limit: 2, remaining: 1 });
    expect(stats.weekly.count).toBe(2); // Friday 31st and Saturday 1st share the week
  });

  test('a refusal says how long until its window ends (Retry-After)', async () => {
    const limits = new Limits({ daily: 100, weekly: 1, monthly: 100 });
    const userId = newUser().id;
    await limits.reserve(userId, at('2031-08-31T10:00:00Z'));
    await expect(limits.reserve(userId, at('2031-08-31T23:59:00Z'))).rejects.toMatchObject({
      status: 429,
      headers: { 'Retry-After': '60' },
    });
  });
});

describe('transfers resume after a crash between steps (the step runner)', () => {
  async function pendingTransfer(amountMinor: number) {
    const from = newUser();
    const to = newUser();
    await givenBalance(from, 100_00);
    const fromWallet = await openWallet(from.id, from.ref, 'MKT');
    const toWallet = await openWallet(to.id, to.ref, 'MKT');
    const record = (
      await Transfer.create({
        _id: randomUUID(),
        fromWalletId: fromWallet._id,
        toWalletId: toWallet._id,
        fromUserId: from.id,
        toUserId: to.id,
        amountMinor,
        currency: 'ETB',
        status: 'Pending',
      })
    ).toObject();
    return { from, to, record };
  }

  test('died after the debit reached the wallet, before the transfer recorded it: the sweep records it and credits, each once', async () => {
    const { from, to, record } = await pendingTransfer(40_00);
    await applyOp(record.fromWalletId, transferDebitOp(record)); // the wallet write alone, then the process dies
    expect(await balancesOf(from)).toEqual({ available: 60_00, held: 0 });
    await walletApp().parts.transfers.resume(later());
    await walletApp().parts.transfers.resume(later());
    expect((await Transfer.findById(record._id).lean())?.status).toBe('Completed');
    expect(await balancesOf(from)).toEqual({ available: 60_00, held: 0 });
    expect(await balancesOf(to)).toEqual({ available: 40_00, held: 0 });
    expect(await ledgerMatches(from)).toBe(true);
    expect(await ledgerMatches(to)).toBe(true);
  });

  test('died after the credit reached the wallet, before the transfer recorded it: the sweep completes it, credited once', async () => {
    const { from, to, record } = await pendingTransfer(40_00);
    const debited = await walletApp().parts.transfers.debit(record);
    await applyOp(record.toWalletId, transferCreditOp(record, walletApp().config.WALLET_BALANCE_CEILING));
    expect(debited.status).toBe('Debited');
    expect(await balancesOf(to)).toEqual({ available: 40_00, held: 0 });
    await walletApp().parts.transfers.resume(later());
    await walletApp().parts.transfers.resume(later());
    expect((await Transfer.findById(record._id).lean())?.status).toBe('Completed');
    expect(await balancesOf(from)).toEqual({ available: 60_00, held: 0 });
    expect(await balancesOf(to)).toEqual({ available: 40_00, held: 0 });
    expect(await ledgerMatches(from)).toBe(true);
    expect(await ledgerMatches(to)).toBe(true);
  });
});

describe('booking holds resume after a crash between steps (the step runner)', () => {
  async function heldBooking(amountMinor: number) {
    const buyer = newUser();
    const seller = newUser('seller');
    await givenBalance(buyer, 300_00);
    await openWallet(seller.id, seller.ref, 'MKT');
    const body = {
      bookingId: randomUUID(),
      buyerId: buyer.id,
      buyerRef: buyer.ref,
      sellerId: seller.id,
      amountMinor,
      currency: 'ETB',
    };
    expect((await walletApp().parts.holds.hold(body, 'booking-request')).status).toBe('Held');
    return { buyer, seller, body };
  }

  test('died after the hold reached the wallet, before the hold recorded it: the consultation’s retry records it, held once', async () => {
    const { buyer, body } = await heldBooking(100_00);
    // The record as the dead process left it: the wallet holds the amount, the record does not say so.
    await BookingHold.updateOne({ _id: body.bookingId }, { $set: { status: 'Pending', hold: 'pending' } });
    const retried = await walletApp().parts.holds.hold(body, 'booking-request');
    expect(retried).toMatchObject({ status: 'Held', hold: 'done' });
    expect(await balancesOf(buyer)).toEqual({ available: 200_00, held: 100_00 });
    expect(await ledgerMatches(buyer)).toBe(true);
  });

  test('died after the release reached the buyer’s wallet, before the hold recorded it: the sweep finishes the capture, each step once', async () => {
    const { buyer, seller, body } = await heldBooking(100_00);
    const settlement = { ...settlementOf('capture', 100_00, 0, 0), decidedAt: new Date() };
    // The decision (one write), then the buyer's step applied alone, then the process dies.
    await BookingHold.updateOne(
      { _id: body.bookingId },
      { $set: { status: 'Settling', settlement, dueAt: null, release: 'pending', credit: 'pending', fee: 'none' } },
    );
    const record = (await BookingHold.findById(body.bookingId).lean())!;
    await applyOp(record.buyerWalletId!, releaseOp(record, settlement));
    expect(await balancesOf(buyer)).toEqual({ available: 200_00, held: 0 });
    await walletApp().parts.holds.resume(later());
    await walletApp().parts.holds.resume(later());
    expect(await BookingHold.findById(body.bookingId).lean()).toMatchObject({ status: 'Settled', release: 'done', credit: 'done' });
    expect(await balancesOf(buyer)).toEqual({ available: 200_00, held: 0 });
    expect(await balancesOf(seller)).toEqual({ available: 100_00, held: 0 });
    expect(await ledgerMatches(buyer)).toBe(true);
    expect(await ledgerMatches(seller)).toBe(true);
  });

  test('a cancellation interrupted before its credit: the sweep refunds and credits the rest, once', async () => {
    const { buyer, seller, body } = await heldBooking(100_00);
    const settlement = { ...settlementOf('cancel', 100_00, 30_00, 0), decidedAt: new Date() };
    await BookingHold.updateOne(
      { _id: body.bookingId },
      { $set: { status: 'Settling', settlement, dueAt: null, release: 'pending', credit: 'pending', fee: 'none' } },
    );
    await walletApp().parts.holds.resume(later());
    await walletApp().parts.holds.resume(later());
    expect((await BookingHold.findById(body.bookingId).lean())?.status).toBe('Settled');
    expect(await balancesOf(buyer)).toEqual({ available: 230_00, held: 0 });
    expect(await balancesOf(seller)).toEqual({ available: 70_00, held: 0 });
    expect(await ledgerMatches(buyer)).toBe(true);
    expect(await ledgerMatches(seller)).toBe(true);
  });
});
