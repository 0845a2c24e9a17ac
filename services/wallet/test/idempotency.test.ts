import { randomUUID } from 'node:crypto';
import { OPERATIONS } from '@mkt/contracts';
import { IDEMPOTENCY_LEASE_MS, requestFingerprint, type Attempt, type StoredResponse } from '@mkt/kit/db';
import { operationRequest } from '@mkt/kit/http';
import {
  balancesOf,
  call,
  givenBalance,
  IdempotencyRecord,
  ledgerMatches,
  newUser,
  openWallet,
  Payout,
  Transfer,
  tokenOf,
  transferDebitedThenCrashed,
  uniqueName,
  useWallet,
} from './harness';

const walletApp = useWallet();
/** The wallet's keyed creates (kit's IdempotentRequests on its `idempotency_keys`). */
const idempotent = (scope: string, userId: string, key: string, request: unknown, run: (attempt: Attempt) => Promise<StoredResponse>) =>
  walletApp().parts.requests.run(scope, userId, key, request, run);
type User = ReturnType<typeof newUser>;

const transfer = (from: User, body: object, key: string) =>
  call(walletApp().url, 'POST', '/v1/wallet/transfers', { token: tokenOf(from), body, headers: { 'idempotency-key': key } });

async function pair() {
  const from = newUser();
  const to = newUser();
  await givenBalance(from, 100_00);
  await openWallet(to.id, to.ref, 'MKT');
  return { from, to };
}

/** What a process that died mid-request leaves: the key claimed, no answer, its lease run out. */
async function leftByDeadProcess(id: string, requestHash: string, resourceId: string) {
  await IdempotencyRecord.updateOne(
    { _id: id },
    {
      $set: { requestHash, state: 'in_progress', resourceId, status: null, body: null, leaseUntil: new Date(Date.now() - 1) },
      $setOnInsert: { createdAt: new Date(Date.now() - IDEMPOTENCY_LEASE_MS - 1) },
    },
    { upsert: true },
  );
}

describe('Idempotency-Key after a failure', () => {
  test('a 5xx ends the attempt: the retry takes it over at once with the same resource id, and its answer is then replayed', async () => {
    const user = newUser();
    const key = uniqueName('k');
    let runs = 0;
    const attempts: Attempt[] = [];
    const run = async (attempt: Attempt) => {
      runs += 1;
      attempts.push(attempt);
      // Part of the work may be done before the failure (a hold taken, then the database went
      // away): a retry under a fresh id would do it a second time (found in review).
      if (runs === 1) throw new Error('the database went away');
      return { status: 200, body: { run: runs } };
    };
    await expect(idempotent('test', user.id, key, { a: 1 }, run)).rejects.toThrow('the database went away');
    expect(await IdempotencyRecord.findById(`${user.id}:test:${key}`).lean()).toMatchObject({ state: 'in_progress' });
    expect(await idempotent('test', user.id, key, { a: 1 }, run)).toEqual({ status: 200, body: { run: 2 } });
    expect(attempts[1]).toEqual({ resourceId: attempts[0]!.resourceId, retaken: true });
    expect(await idempotent('test', user.id, key, { a: 1 }, run)).toEqual({ status: 200, body: { run: 2 } });
    expect(runs).toBe(2);
  });

  test('a duplicate while the first attempt is in flight is 409 conflict and moves nothing', async () => {
    const { from, to } = await pair();
    const body = { toUserId: to.id, amount: 10_00, currency: 'ETB' };
    const key = uniqueName('k');
    await IdempotencyRecord.create({
      _id: `${from.id}:transfer:${key}`,
      requestHash: requestFingerprint(operationRequest(OPERATIONS.createTransfer, { body })),
      state: 'in_progress',
      resourceId: randomUUID(),
      leaseUntil: new Date(Date.now() + IDEMPOTENCY_LEASE_MS),
      createdAt: new Date(),
    });
    const res = await transfer(from, body, key);
    expect(res.status).toBe(409);
    expect(res.body.errors[0].code).toBe('conflict');
    expect(await balancesOf(from)).toEqual({ available: 100_00, held: 0 });
  });

  test('the process died after the transfer but before storing the answer: the retry answers the same transfer, moved once', async () => {
    const { from, to } = await pair();
    const body = { toUserId: to.id, amount: 30_00, currency: 'ETB' };
    const key = uniqueName('k');
    const first = await transfer(from, body, key);
    expect(first.status).toBe(200);
    const id = `${from.id}:transfer:${key}`;
    await leftByDeadProcess(id, requestFingerprint(operationRequest(OPERATIONS.createTransfer, { body })), first.body.data.id);
    const retry = await transfer(from, body, key);
    expect(retry.status).toBe(200);
    expect(retry.body.data).toMatchObject({ id: first.body.data.id, status: 'Completed' });
    expect(await Transfer.countDocuments({ fromUserId: from.id })).toBe(1);
    expect(await balancesOf(from)).toEqual({ available: 70_00, held: 0 });
    expect(await balancesOf(to)).toEqual({ available: 30_00, held: 0 });
    expect((await transfer(from, body, key)).body.data.id).toBe(first.body.data.id);
  });

  test('the process died between the debit and the credit: the retry completes that transfer, once', async () => {
    const { from, to } = await pair();
    const body = { toUserId: to.id, amount: 40_00, currency: 'ETB' };
    const key = uniqueName('k');
    const resourceId = randomUUID();
    await transferDebitedThenCrashed(walletApp(), from, to, 40_00, resourceId);
    await leftByDeadProcess(
      `${from.id}:transfer:${key}`,
      requestFingerprint(operationRequest(OPERATIONS.createTransfer, { body })),
      resourceId,
    );
    const retry = await transfer(from, body, key);
    expect(retry.status).toBe(200);
    expect(retry.body.data).toMatchObject({ id: resourceId, status: 'Completed' });
    expect(await Transfer.countDocuments({ fromUserId: from.id })).toBe(1);
    expect(await balancesOf(from)).toEqual({ available: 60_00, held: 0 });
    expect(await balancesOf(to)).toEqual({ available: 40_00, held: 0 });
    expect(await ledgerMatches(from)).toBe(true);
    expect(await ledgerMatches(to)).toBe(true);
  });

  test('the process died after a payout was held: the retry answers that payout and holds nothing more', async () => {
    const user = newUser();
    await givenBalance(user, 500_00);
    const body = { amount: '150.00', bankCode: 'CBE', accountNumber: '1000123456789', accountName: 'Abebe Kebede', reason: 'Earnings' };
    const key = uniqueName('k');
    const path = `/wallets/users/${user.ref}/payout-request`;
    const send = () => call(walletApp().url, 'POST', path, { token: tokenOf(user), body, headers: { 'idempotency-key': key } });
    const first = await send();
    expect(first.status).toBe(200);
    const id = `${user.id}:payout:${key}`;
    const request = operationRequest(OPERATIONS.createPayoutRequest, { params: { userReferenceId: user.ref }, body });
    await leftByDeadProcess(id, requestFingerprint(request), first.body.data.id);
    const retry = await send();
    expect(retry.status).toBe(200);
    expect(retry.body.data.referenceId).toBe(first.body.data.referenceId);
    expect(await Payout.countDocuments({ userId: user.id })).toBe(1);
    expect(await balancesOf(user)).toEqual({ available: 350_00, held: 150_00 });
    expect(await ledgerMatches(user)).toBe(true);
  });
});
