import { randomUUID } from 'node:crypto';
import { usersConsumer } from '../src/events/users.consumer';
import { makeEvent } from '@mkt/contracts';
import { waitFor } from '@mkt/infra';
import {
  balancesOf,
  call,
  givenBalance,
  LedgerEntryModel,
  ledgerMatches,
  log,
  newUser,
  openWallet,
  tokenOf,
  Transfer,
  transferDebitedThenCrashed,
  useWallet,
  Wallet,
} from './harness';

const walletApp = useWallet();

const transfer = (from: ReturnType<typeof newUser>, body: object, headers: Record<string, string> = {}) =>
  call(walletApp().url, 'POST', '/v1/wallet/transfers', { token: tokenOf(from), body, headers });

async function pair() {
  const from = newUser();
  const to = newUser();
  await givenBalance(from, 100_00);
  await openWallet(to.id, to.ref, 'MKT');
  return { from, to };
}

describe('POST /v1/wallet/transfers', () => {
  test('moves minor units from one wallet to another', async () => {
    const { from, to } = await pair();
    const res = await transfer(from, { toUserId: to.id, amount: 25_50, currency: 'ETB' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ fromUserId: from.id, toUserId: to.id, amount: 2550, currency: 'ETB', status: 'Completed' });
    expect(await balancesOf(from)).toEqual({ available: 74_50, held: 0 });
    expect(await balancesOf(to)).toEqual({ available: 25_50, held: 0 });
    expect(await ledgerMatches(from)).toBe(true);
    expect(await ledgerMatches(to)).toBe(true);
  });

  test('short of funds is 422 and moves nothing', async () => {
    const { from, to } = await pair();
    const res = await transfer(from, { toUserId: to.id, amount: 100_01, currency: 'ETB' });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].code).toBe('insufficient_funds');
    expect(await balancesOf(from)).toEqual({ available: 100_00, held: 0 });
    expect(await balancesOf(to)).toEqual({ available: 0, held: 0 });
  });

  test('bad requests: unknown recipient 404, to oneself 422, another currency 422, fractions 400', async () => {
    const { from, to } = await pair();
    expect((await transfer(from, { toUserId: randomUUID(), amount: 1, currency: 'ETB' })).status).toBe(404);
    expect((await transfer(from, { toUserId: from.id, amount: 1, currency: 'ETB' })).status).toBe(422);
    expect((await transfer(from, { toUserId: to.id, amount: 1, currency: 'USD' })).status).toBe(422);
    expect((await transfer(from, { toUserId: to.id, amount: 1.5, currency: 'ETB' })).status).toBe(400);
    expect((await transfer(from, { toUserId: to.id, amount: 0, currency: 'ETB' })).status).toBe(400);
    expect(await balancesOf(from)).toEqual({ available: 100_00, held: 0 });
  });

  test('50 concurrent transfers never overdraw; the ledgers sum to the balances', async () => {
    const { from, to } = await pair();
    const results = await Promise.all(Array.from({ length: 50 }, () => transfer(from, { toUserId: to.id, amount: 3_00, currency: 'ETB' })));
    expect(results.filter((res) => res.status === 200)).toHaveLength(33);
    expect(results.filter((res) => res.status === 422)).toHaveLength(17);
    expect(await balancesOf(from)).toEqual({ available: 1_00, held: 0 });
    expect(await balancesOf(to)).toEqual({ available: 99_00, held: 0 });
    expect(await ledgerMatches(from)).toBe(true);
    expect(await ledgerMatches(to)).toBe(true);
  });

  test('Idempotency-Key: a retried transfer moves the money once', async () => {
    const { from, to } = await pair();
    const body = { toUserId: to.id, amount: 10_00, currency: 'ETB' };
    const first = await transfer(from, body, { 'idempotency-key': 'tr-1' });
    const again = await transfer(from, body, { 'idempotency-key': 'tr-1' });
    expect(again.body).toEqual(first.body);
    expect(await balancesOf(from)).toEqual({ available: 90_00, held: 0 });
    expect((await transfer(from, { ...body, amount: 5 }, { 'idempotency-key': 'tr-1' })).status).toBe(409);
  });

  test('Idempotency-Key: the same transfer with its fields in another order is the same request (replayed, moved once)', async () => {
    const { from, to } = await pair();
    const body = { toUserId: to.id, amount: 10_00, currency: 'ETB' };
    const first = await transfer(from, body, { 'idempotency-key': 'tr-spelled' });
    expect(first.status).toBe(200);
    const again = await transfer(from, { currency: 'ETB', amount: 10_00, toUserId: to.id }, { 'idempotency-key': 'tr-spelled' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(await balancesOf(from)).toEqual({ available: 90_00, held: 0 });
    expect(await balancesOf(to)).toEqual({ available: 10_00, held: 0 });
  });

  test('a transfer that died between debit and credit is completed by the sweeper, once', async () => {
    const { from, to } = await pair();
    const id = await transferDebitedThenCrashed(walletApp(), from, to, 40_00); // ...and the process dies here
    expect(await balancesOf(from)).toEqual({ available: 60_00, held: 0 });
    expect(await balancesOf(to)).toEqual({ available: 0, held: 0 });
    const later = new Date(Date.now() + 60_000);
    await walletApp().parts.transfers.resume(later);
    await walletApp().parts.transfers.resume(later);
    expect((await Transfer.findById(id).lean())?.status).toBe('Completed');
    expect(await balancesOf(from)).toEqual({ available: 60_00, held: 0 });
    expect(await balancesOf(to)).toEqual({ available: 40_00, held: 0 });
    expect(await ledgerMatches(to)).toBe(true);
  });
});

describe('a credit refused after the debit applied never fails the transfer', () => {
  test('a transfer left Pending with its debit applied, whose credit is refused (no wallet to read): it waits Debited, then completes', async () => {
    const { from, to } = await pair();
    const id = await transferDebitedThenCrashed(walletApp(), from, to, 25_00);
    // The flow records nothing between its steps: a crash after the debit leaves the transfer Pending.
    await Transfer.updateOne({ _id: id }, { $set: { status: 'Pending' } });
    const recipient = (await Wallet.findOne({ userId: to.id }).lean())!;
    await Wallet.deleteOne({ userId: to.id });
    const later = new Date(Date.now() + 60_000);
    await walletApp().parts.transfers.resume(later);
    expect((await Transfer.findById(id).lean())?.status).toBe('Debited');
    expect(await balancesOf(from)).toEqual({ available: 75_00, held: 0 });

    await Wallet.collection.insertOne(recipient as never);
    await walletApp().parts.transfers.resume(later);
    expect((await Transfer.findById(id).lean())?.status).toBe('Completed');
    expect(await balancesOf(from)).toEqual({ available: 75_00, held: 0 });
    expect(await balancesOf(to)).toEqual({ available: 25_00, held: 0 });
    expect(await ledgerMatches(to)).toBe(true);
  });
});

describe('an op id is a ledger key, kept for good and never on the wallet', () => {
  test('a step run again from a stale read after it completed changes nothing, however late', async () => {
    const { from, to } = await pair();
    const res = await transfer(from, { toUserId: to.id, amount: 10_00, currency: 'ETB' });
    const done = (await Transfer.findById(res.body.data.id).lean())!;
    // A second runner that read the transfer while it was still Pending, arriving late:
    await walletApp().parts.transfers.debit({ ...done, status: 'Pending' });
    await walletApp().parts.transfers.credit({ ...done, status: 'Debited' });
    expect(await balancesOf(from)).toEqual({ available: 90_00, held: 0 });
    expect(await balancesOf(to)).toEqual({ available: 10_00, held: 0 });
    const wallet = (await Wallet.findOne({ userId: from.id }).lean())!;
    expect(wallet).toMatchObject({ appliedOps: false, inflight: [], inflightInMinor: 0, inflightOutMinor: 0 });
    expect(wallet).not.toHaveProperty('doneOps');
    expect(wallet).not.toHaveProperty('pendingEntries');
    expect(await LedgerEntryModel.countDocuments({ _id: `transfer:${done._id}:debit` })).toBe(1);
    expect(await ledgerMatches(from)).toBe(true);
    expect(await ledgerMatches(to)).toBe(true);
  });
});

describe('identity.user.registered', () => {
  test('opens the wallet, once however often it arrives', async () => {
    const user = newUser();
    const handler = usersConsumer(walletApp().parts.wallets).handlers['identity.user.registered']!;
    const event = makeEvent(
      'identity.user.registered',
      { userId: user.id, referenceId: user.ref, role: 'buyer', fullName: 'A', email: 'a@b.c' },
      { source: 'gateway' },
    );
    await handler(event, { log });
    await handler(event, { log });
    expect(await Wallet.countDocuments({ userId: user.id })).toBe(1);
  });

  test('through the broker: a published registration opens the wallet', async () => {
    await walletApp().bus.consume(usersConsumer(walletApp().parts.wallets));
    const user = newUser();
    await walletApp().bus.publish(
      makeEvent(
        'identity.user.registered',
        { userId: user.id, referenceId: user.ref, role: 'seller', fullName: 'S', email: 's@b.c' },
        { source: 'gateway' },
      ),
    );
    await waitFor(() => Wallet.exists({ userId: user.id }), { what: 'the wallet the registration opens' });
    expect(await Wallet.findOne({ userId: user.id }).lean()).toMatchObject({ userRef: user.ref, availableMinor: 0 });
  });
});
