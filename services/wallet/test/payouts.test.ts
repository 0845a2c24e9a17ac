import { balancesOf, call, env, givenBalance, ledgerMatches, newUser, Payout, tokenOf, Usage, useWallet } from './harness';

const walletApp = useWallet();

test('the wallet under test works in this file’s own database, not the driver’s default', () => {
  expect(walletApp().url).toBeTruthy();
  // The wallet's own connection (kit's createDatabase), not mongoose's default one.
  expect(walletApp().parts.models.Wallet.db.db?.databaseName).toBe(env.dbName);
});

const payout = (amount = '150.00') => ({
  amount,
  bankCode: 'CBE',
  accountNumber: '1000123456789',
  accountName: 'Abebe Kebede',
  reason: 'Earnings',
});
const admin = newUser('admin');

async function request(user = newUser(), body: object = payout()) {
  return call(walletApp().url, 'POST', `/wallets/users/${user.ref}/payout-request`, { token: tokenOf(user), body });
}
const move = (reference: string, action: string, as = admin, body: object = {}) =>
  call(walletApp().url, 'POST', `/wallets/payout-requests/${reference}/${action}`, { token: tokenOf(as), body });

describe('POST /wallets/users/:ref/payout-request', () => {
  test('holds the amount and answers Pending with a 2-decimal string', async () => {
    const user = newUser();
    await givenBalance(user, 500_00);
    const res = await request(user);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      requestedAmount: '150.00',
      status: 'Pending',
      bankCode: 'CBE',
      accountNumber: '1000123456789',
      accountName: 'Abebe Kebede',
      reason: 'Earnings',
    });
    expect(res.body.data.referenceId).toMatch(/^MKT-PAY-REQ-[A-Z0-9]{8}$/);
    expect(await balancesOf(user)).toEqual({ available: 350_00, held: 150_00 });
    const view = await call(walletApp().url, 'GET', '/v1/wallet', { token: tokenOf(user) });
    expect(view.body.data).toMatchObject({ etbAvailableBalance: 350, heldBalance: 150 });
    const status = await call(walletApp().url, 'GET', `/wallets/payout-requests/${res.body.data.referenceId}/status`, {
      token: tokenOf(user),
    });
    expect(status.body.data).toEqual({
      referenceId: res.body.data.referenceId,
      requestedAmount: '150.00',
      status: 'Pending',
      processedAt: null,
      adminNotes: null,
      history: [expect.objectContaining({ action: 'request', to: 'Pending', byUserId: user.id })],
    });
  });

  test.each([['150.001'], ['0'], ['0.00'], ['-10.00'], ['abc'], ['1e3']])('amount %s is 400', async (amount) => {
    const user = newUser();
    await givenBalance(user, 500_00);
    const res = await request(user, payout(amount));
    expect(res.status).toBe(400);
    expect(res.body.errors[0].path).toBe('amount');
    expect(await balancesOf(user)).toEqual({ available: 500_00, held: 0 });
  });

  test('an unknown bank and a wrong account length are 422', async () => {
    const user = newUser();
    await givenBalance(user, 500_00);
    expect((await request(user, { ...payout(), bankCode: 'NOPE' })).body.errors[0].path).toBe('bankCode');
    const short = await request(user, { ...payout(), accountNumber: '12345' });
    expect(short.status).toBe(422);
    expect(short.body.errors[0].path).toBe('accountNumber');
    expect((await request(user, { ...payout(), bankCode: 'TELEBIRR', accountNumber: '0911223344' })).status).toBe(200);
  });

  test('more than available is 422 insufficient_funds; nothing held, created or counted', async () => {
    const user = newUser();
    await givenBalance(user, 100_00);
    const res = await request(user, payout('500.00'));
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ success: false, errors: [{ code: 'insufficient_funds' }] });
    expect(await balancesOf(user)).toEqual({ available: 100_00, held: 0 });
    expect(await Payout.countDocuments({ userId: user.id })).toBe(0);
    expect(await Usage.countDocuments({ _id: new RegExp(`^${user.id}:`), count: { $gt: 0 } })).toBe(0);
  });

  test('50 concurrent requests never overdraw and the ledger sums to the balance', async () => {
    const user = newUser();
    await givenBalance(user, 1_000_00);
    const results = await Promise.all(Array.from({ length: 50 }, () => request(user, payout('30.00'))));
    const accepted = results.filter((res) => res.status === 200).length;
    expect(accepted).toBe(33);
    expect(results.filter((res) => res.status === 422)).toHaveLength(17);
    expect(await balancesOf(user)).toEqual({ available: 10_00, held: 990_00 });
    expect(await ledgerMatches(user)).toBe(true);
  });
});

describe('payout moves', () => {
  async function pending(amount = '150.00') {
    const user = newUser();
    await givenBalance(user, 500_00);
    const res = await request(user, payout(amount));
    return { user, reference: res.body.data.referenceId as string };
  }

  test('the owner cancels a Pending request: the hold is released; a second cancel is 409', async () => {
    const { user, reference } = await pending();
    const cancel = () => call(walletApp().url, 'POST', `/wallets/payout-requests/${reference}/cancel`, { token: tokenOf(user) });
    const res = await cancel();
    expect(res.body).toEqual({ success: true, message: 'Payout request cancelled' });
    expect(await balancesOf(user)).toEqual({ available: 500_00, held: 0 });
    const again = await cancel();
    expect(again.status).toBe(409);
    expect(again.body.errors[0].code).toBe('invalid_state');
    expect(await ledgerMatches(user)).toBe(true);
  });

  test('approve → process → complete pays the held amount out, with notes and processedAt', async () => {
    const { user, reference } = await pending();
    expect((await move(reference, 'approve', admin, { adminNotes: 'checked' })).body.data.status).toBe('Approved');
    expect((await move(reference, 'process')).body.data.status).toBe('Processing');
    const done = await move(reference, 'complete', admin, { adminNotes: 'sent' });
    expect(done.body.data).toMatchObject({ status: 'Completed', adminNotes: 'sent' });
    expect(Date.parse(done.body.data.processedAt)).not.toBeNaN();
    expect(await balancesOf(user)).toEqual({ available: 350_00, held: 0 });
    expect(await ledgerMatches(user)).toBe(true);
  });

  test('the owner’s history shows that an admin moved the payout, never the admin’s id; the admin sees who', async () => {
    const { user, reference } = await pending();
    await move(reference, 'approve', admin, { adminNotes: 'checked' });
    const statusAs = (viewer: typeof user) =>
      call(walletApp().url, 'GET', `/wallets/payout-requests/${reference}/status`, { token: tokenOf(viewer) });
    const own = await statusAs(user);
    expect(own.body.data.history).toEqual([
      expect.objectContaining({ action: 'request', byUserId: user.id, byRole: 'buyer' }),
      expect.objectContaining({ action: 'approve', byUserId: null, byRole: 'admin', notes: 'checked' }),
    ]);
    expect(JSON.stringify(own.body)).not.toContain(admin.id);
    const audit = await statusAs(admin);
    expect(audit.body.data.history[1]).toMatchObject({ action: 'approve', byUserId: admin.id, byRole: 'admin' });
  });

  test('reject and fail give the hold back', async () => {
    const first = await pending();
    await move(first.reference, 'reject', admin, { adminNotes: 'wrong name' });
    expect(await balancesOf(first.user)).toEqual({ available: 500_00, held: 0 });
    const second = await pending();
    await move(second.reference, 'approve');
    await move(second.reference, 'process');
    expect((await move(second.reference, 'fail')).body.data.status).toBe('Failed');
    expect(await balancesOf(second.user)).toEqual({ available: 500_00, held: 0 });
  });

  test('moves not allowed are 409; only admins move; others cannot see or cancel', async () => {
    const { user, reference } = await pending();
    expect((await move(reference, 'complete')).status).toBe(409);
    expect((await move(reference, 'approve', user)).status).toBe(403);
    const stranger = newUser();
    expect((await call(walletApp().url, 'POST', `/wallets/payout-requests/${reference}/cancel`, { token: tokenOf(stranger) })).status).toBe(
      403,
    );
    expect((await call(walletApp().url, 'GET', `/wallets/payout-requests/${reference}/status`, { token: tokenOf(stranger) })).status).toBe(
      403,
    );
    expect((await move(reference, 'explode')).status).toBe(400);
    expect((await move('MKT-PAY-REQ-ZZZZZZZZ', 'approve')).status).toBe(404);
  });

  test('two admins racing on one request: one move wins', async () => {
    const { user, reference } = await pending();
    const [a, b] = await Promise.all([move(reference, 'reject'), move(reference, 'approve')]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const { held } = await balancesOf(user);
    expect([0, 150_00]).toContain(held);
    expect(await ledgerMatches(user)).toBe(true);
  });
});
