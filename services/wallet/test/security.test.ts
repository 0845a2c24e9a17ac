import { Writable } from 'node:stream';
import { createLogger } from '@mkt/kit/logger';
import { loadConfig } from '../src/config';
import {
  applyOp,
  applyWalletOp,
  balancesOf,
  call,
  givenBalance,
  ledgerMatches,
  newUser,
  openWallet,
  Payout,
  startWallet,
  tokenOf,
  TopUp,
  Transfer,
  useWallet,
  Wallet,
  type WalletApp,
} from './harness';
import { testServers } from '@mkt/infra';

// Each block reproduces an attack of the audit and checks the documented answer.
const walletApp = useWallet({ WALLET_BALANCE_CEILING: '5000.00', TOPUP_MAX_AMOUNT: '2000.00', TRANSFER_MAX_AMOUNT: '2000.00' });

const topUp = (user: ReturnType<typeof newUser>, body: object, app: WalletApp = walletApp()) =>
  call(app.url, 'POST', `/wallets/users/${user.ref}/topup`, { token: tokenOf(user), body });
const topUpBody = (overrides: object = {}) => ({
  amount: 100,
  paymentMethod: 'Chapa',
  redirectUrl: 'https://shop.example/back',
  ...overrides,
});

async function pay(paymentUrl: string, app: WalletApp = walletApp()) {
  const url = new URL(paymentUrl);
  return fetch(`${app.url}${url.pathname}/pay`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: url.searchParams.get('token')! }).toString(),
  });
}

describe('free money: the provider is explicit in production', () => {
  const { mongoUrl, amqpUrl } = testServers();
  const env = (extra: Record<string, string>) => ({
    MONGO_URL: mongoUrl,
    AMQP_URL: amqpUrl,
    JWT_PUBLIC_KEY: 'key',
    NODE_ENV: 'production',
    CHECKOUT_REDIRECT_ORIGINS: 'https://shop.example',
    INTERNAL_API_TOKEN: 'a-service-credential-of-at-least-32-chars',
    ...extra,
  });

  test('production without PAYMENT_PROVIDER refuses to start', () => {
    expect(() => loadConfig(env({}))).toThrow(/PAYMENT_PROVIDER must be set explicitly/);
  });

  test('production with the sandbox refuses to start unless ALLOW_SANDBOX_PAYMENTS=true', () => {
    expect(() => loadConfig(env({ PAYMENT_PROVIDER: 'sandbox' }))).toThrow(/ALLOW_SANDBOX_PAYMENTS=true/);
    expect(() => loadConfig(env({ PAYMENT_PROVIDER: 'sandbox', ALLOW_SANDBOX_PAYMENTS: 'yes' }))).toThrow();
    expect(loadConfig(env({ PAYMENT_PROVIDER: 'sandbox', ALLOW_SANDBOX_PAYMENTS: 'true' })).PAYMENT_PROVIDER).toBe('sandbox');
  });

  test('production with chapa needs its keys and the redirect origins', () => {
    expect(() => loadConfig(env({ PAYMENT_PROVIDER: 'chapa' }))).toThrow(/CHAPA_SECRET_KEY/);
    const keys = { PAYMENT_PROVIDER: 'chapa', CHAPA_SECRET_KEY: 'k', CHAPA_WEBHOOK_SECRET: 's' };
    expect(loadConfig(env(keys)).PAYMENT_PROVIDER).toBe('chapa');
    expect(() => loadConfig(env({ ...keys, CHECKOUT_REDIRECT_ORIGINS: '' }))).toThrow(/CHECKOUT_REDIRECT_ORIGINS/);
    expect(() => loadConfig(env({ ...keys, CHECKOUT_REDIRECT_ORIGINS: 'https://shop.example/path' }))).toThrow();
    expect(() => loadConfig(env({ ...keys, INTERNAL_API_TOKEN: '' }))).toThrow(/INTERNAL_API_TOKEN/);
    expect(() => loadConfig(env({ ...keys, INTERNAL_API_TOKEN: 'too-short' }))).toThrow(/INTERNAL_API_TOKEN/);
  });

  test('limits default to 1,000,000.00 ETB per top-up and transfer; nonsense limits are refused', () => {
    const config = loadConfig({ MONGO_URL: mongoUrl, AMQP_URL: amqpUrl, JWT_PUBLIC_KEY: 'key' });
    expect(config.TOPUP_MAX_AMOUNT).toBe(1_000_000_00);
    expect(config.TRANSFER_MAX_AMOUNT).toBe(1_000_000_00);
    expect(config.PAYMENT_PROVIDER).toBe('sandbox');
    expect(() => loadConfig({ MONGO_URL: mongoUrl, AMQP_URL: amqpUrl, JWT_PUBLIC_KEY: 'k', WALLET_BALANCE_CEILING: '1e20' })).toThrow();
    expect(() =>
      loadConfig({
        MONGO_URL: mongoUrl,
        AMQP_URL: amqpUrl,
        JWT_PUBLIC_KEY: 'k',
        WALLET_BALANCE_CEILING: '10.00',
        TOPUP_MAX_AMOUNT: '20.00',
      }),
    ).toThrow();
  });

  test('a top-up over the maximum is 422 and creates nothing; 90 trillion is refused too', async () => {
    const user = newUser();
    for (const amount of [2000.01, 9_999_999_999.99]) {
      const res = await topUp(user, topUpBody({ amount }));
      expect(res.status).toBe(422);
      expect(res.body.errors[0]).toMatchObject({ code: 'amount_too_large', path: 'amount' });
    }
    // The audit's 90 trillion cannot even be read exactly as a JSON number: refused at the schema.
    const huge = await topUp(user, topUpBody({ amount: 90_000_000_000_000 }));
    expect(huge.status).toBe(400);
    expect(huge.body.errors[0].path).toBe('amount');
    expect(await TopUp.countDocuments({ userId: user.id })).toBe(0);
  });

  test('a transfer over the maximum is 422 and moves nothing', async () => {
    const from = newUser();
    const to = newUser();
    await givenBalance(from, 4000_00);
    await openWallet(to.id, to.ref, 'MKT');
    const res = await call(walletApp().url, 'POST', '/v1/wallet/transfers', {
      token: tokenOf(from),
      body: { toUserId: to.id, amount: 2000_01, currency: 'ETB' },
    });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].code).toBe('amount_too_large');
    expect(await balancesOf(from)).toEqual({ available: 4000_00, held: 0 });
    expect(await Transfer.countDocuments({ fromUserId: from.id })).toBe(0);
  });
});

describe('balance overflow: every balance stays under its ceiling', () => {
  test('a transfer that would take the recipient past the ceiling is 422 and changes nothing', async () => {
    const from = newUser();
    const victim = newUser();
    await givenBalance(from, 2000_00);
    await givenBalance(victim, 4000_00);
    const res = await call(walletApp().url, 'POST', '/v1/wallet/transfers', {
      token: tokenOf(from),
      body: { toUserId: victim.id, amount: 1000_01, currency: 'ETB' },
    });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].code).toBe('balance_limit_exceeded');
    expect(await balancesOf(from)).toEqual({ available: 2000_00, held: 0 });
    expect(await balancesOf(victim)).toEqual({ available: 4000_00, held: 0 });
    const view = await call(walletApp().url, 'GET', '/v1/wallet', { token: tokenOf(victim) });
    expect(view.status).toBe(200);
    expect(view.body.data.etbAvailableBalance).toBe(4000);
  });

  test('a transfer whose credit waits under the recipient’s ceiling answers Debited, credit pending (not completed)', async () => {
    const from = newUser();
    const recipient = newUser();
    await givenBalance(from, 2000_00);
    await givenBalance(recipient, 4000_00);
    const recipientWallet = await openWallet(recipient.id, recipient.ref, 'MKT');
    // A credit lands on the recipient between the transfer's check and its credit: no room is left.
    const repository = walletApp().parts.walletRepository;
    const read = repository.ofUsers.bind(repository);
    repository.ofUsers = async (userIds) => {
      const parties = await read(userIds);
      repository.ofUsers = read;
      await applyWalletOp(recipientWallet._id, {
        opId: `racing-${recipient.id}`,
        type: 'topup_credit',
        availableDeltaMinor: 600_00,
        heldDeltaMinor: 0,
        reference: 'race',
      });
      return parties;
    };
    const res = await call(walletApp().url, 'POST', '/v1/wallet/transfers', {
      token: tokenOf(from),
      body: { toUserId: recipient.id, amount: 1000_00, currency: 'ETB' },
    });
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('Transfer debited; credit pending');
    expect(res.body.data).toMatchObject({ status: 'Debited', completedAt: null });
    expect(await balancesOf(from)).toEqual({ available: 1000_00, held: 0 });
    expect(await balancesOf(recipient)).toEqual({ available: 4600_00, held: 0 });
  });

  test('a top-up that would pass the ceiling is 422 at creation, and Failed (uncredited) at payment', async () => {
    const user = newUser();
    await givenBalance(user, 3500_00);
    const tooMuch = await topUp(user, topUpBody({ amount: 1500.01 }));
    expect(tooMuch.status).toBe(422);
    expect(tooMuch.body.errors[0].code).toBe('balance_limit_exceeded');
    // Two top-ups that each fit, paid one after the other: the second no longer fits.
    const first = await topUp(user, topUpBody({ amount: 1000 }));
    const second = await topUp(user, topUpBody({ amount: 1000 }));
    expect((await pay(first.body.data.paymentUrl)).headers.get('location')).toContain('status=Completed');
    expect((await pay(second.body.data.paymentUrl)).headers.get('location')).toContain('status=Failed');
    expect(await balancesOf(user)).toEqual({ available: 4500_00, held: 0 });
    expect(await ledgerMatches(user)).toBe(true);
  });

  test('racing credits: the guard is in the write, so together they never pass the ceiling', async () => {
    const user = newUser();
    await givenBalance(user, 4000_00);
    const wallet = await openWallet(user.id, user.ref, 'MKT');
    const credit = (i: number) =>
      applyOp(wallet._id, {
        opId: `race-${user.id}-${i}`,
        type: 'topup_credit',
        availableDeltaMinor: 300_00,
        heldDeltaMinor: 0,
        reference: 'race',
        ceilingMinor: 5000_00,
      }).then(
        () => 'ok',
        (err: { code?: string }) => err.code,
      );
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => credit(i)));
    expect(results.filter((r) => r === 'ok')).toHaveLength(3);
    expect(results.filter((r) => r === 'balance_limit_exceeded')).toHaveLength(7);
    expect(await balancesOf(user)).toEqual({ available: 4900_00, held: 0 });
  });

  test('an amount past the safe range never reaches a balance', async () => {
    const user = newUser();
    const wallet = await openWallet(user.id, user.ref, 'MKT');
    const op = { opId: `huge-${user.id}`, type: 'topup_credit' as const, heldDeltaMinor: 0, reference: 'x' };
    await expect(applyWalletOp(wallet._id, { ...op, availableDeltaMinor: 2 ** 53 })).rejects.toThrow(RangeError);
    await expect(applyWalletOp(wallet._id, { ...op, availableDeltaMinor: 1.5 })).rejects.toThrow(RangeError);
    expect((await Wallet.findById(wallet._id).lean())!.availableMinor).toBe(0);
  });
});

describe('open redirect: only allowed origins, and the return needs its token', () => {
  test('a redirectUrl off the allow-list is 422 and creates nothing', async () => {
    const user = newUser();
    for (const redirectUrl of ['https://evil.example/phish', 'https://shop.example.evil.example/', 'http://user:pw@shop.example/']) {
      const res = await topUp(user, topUpBody({ redirectUrl }));
      expect(res.status).toBe(422);
      expect(res.body.errors[0].path).toBe('redirectUrl');
    }
    expect(await TopUp.countDocuments({ userId: user.id })).toBe(0);
  });

  test('with no origins configured (development) only localhost is allowed', async () => {
    const dev = await startWallet({ CHECKOUT_REDIRECT_ORIGINS: '' });
    try {
      const user = newUser();
      expect((await topUp(user, topUpBody({ redirectUrl: 'http://localhost:3000/paid' }), dev)).status).toBe(200);
      expect((await topUp(user, topUpBody({ redirectUrl: 'http://127.0.0.1:5173/paid' }), dev)).status).toBe(200);
      expect((await topUp(user, topUpBody({ redirectUrl: 'https://shop.example/back' }), dev)).status).toBe(422);
    } finally {
      await dev.close();
    }
  });

  test('GET …/return without the token answers 404 and redirects nowhere', async () => {
    const user = newUser();
    const created = await topUp(user, topUpBody());
    const reference = created.body.data.referenceId;
    // The redirect target is stored; even a record pointing elsewhere is never followed.
    await TopUp.updateOne({ referenceId: reference }, { $set: { redirectUrl: 'https://evil.example/' } });
    const res = await fetch(`${walletApp().url}/wallets/checkout/${reference}/return`, { redirect: 'manual' });
    expect(res.status).toBe(404);
    expect(res.headers.get('location')).toBeNull();
  });

  test('GET …/return with a bad path and an over-long token answers 400 with both issues, never cached, redirecting nowhere', async () => {
    const res = await fetch(`${walletApp().url}/wallets/checkout/not-a-reference/return?token=${'x'.repeat(201)}`, { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('location')).toBeNull();
    const body = (await res.json()) as { success: boolean; errors: Array<{ path: string; code: string }> };
    expect(body.success).toBe(false);
    expect(body.errors.map((item) => [item.path, item.code])).toEqual([
      ['walletReferenceId', 'invalid'],
      ['token', 'invalid'],
    ]);
  });
});

describe('a lone admin cannot drain a wallet', () => {
  const payout = { amount: '100.00', bankCode: 'CBE', accountNumber: '1000123456789', accountName: 'A B', reason: 'Earnings' };

  test('an admin cannot request a payout from someone else’s wallet', async () => {
    const victim = newUser();
    await givenBalance(victim, 500_00);
    const admin = newUser('admin');
    const res = await call(walletApp().url, 'POST', `/wallets/users/${victim.ref}/payout-request`, { token: tokenOf(admin), body: payout });
    expect(res.status).toBe(403);
    expect(await Payout.countDocuments({ userId: victim.id })).toBe(0);
    expect(await balancesOf(victim)).toEqual({ available: 500_00, held: 0 });
  });

  test('an admin cannot move their own payout; another admin can, and every move is on the record', async () => {
    const admin = newUser('admin');
    const other = newUser('admin');
    await givenBalance(admin, 500_00);
    const created = await call(walletApp().url, 'POST', `/wallets/users/${admin.ref}/payout-request`, {
      token: tokenOf(admin),
      body: payout,
    });
    expect(created.status).toBe(200);
    const reference = created.body.data.referenceId;
    const move = (as: typeof admin, action: string, adminNotes?: string) =>
      call(walletApp().url, 'POST', `/wallets/payout-requests/${reference}/${action}`, {
        token: tokenOf(as),
        body: adminNotes ? { adminNotes } : {},
      });
    expect((await move(admin, 'approve')).status).toBe(403);
    expect((await move(other, 'approve', 'looks fine')).status).toBe(200);
    expect((await move(admin, 'process')).status).toBe(403);
    expect((await move(other, 'process')).status).toBe(200);
    const status = await call(walletApp().url, 'GET', `/wallets/payout-requests/${reference}/status`, { token: tokenOf(admin) });
    expect(status.body.data.status).toBe('Processing');
    expect(status.body.data.history).toEqual([
      expect.objectContaining({ action: 'request', from: null, to: 'Pending', byUserId: admin.id }),
      expect.objectContaining({
        action: 'approve',
        from: 'Pending',
        to: 'Approved',
        byUserId: other.id,
        byRole: 'admin',
        notes: 'looks fine',
      }),
      expect.objectContaining({ action: 'process', from: 'Approved', to: 'Processing', byUserId: other.id, notes: null }),
    ]);
    for (const entry of status.body.data.history) expect(Date.parse(entry.at)).not.toBeNaN();
  });
});

describe('the checkout token is never written to the log', () => {
  test('request lines show the path with the token redacted', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logged = await startWallet({}, createLogger('wallet', 'info', sink));
    try {
      const user = newUser();
      const created = await topUp(user, topUpBody(), logged);
      const url = new URL(created.body.data.paymentUrl);
      const token = url.searchParams.get('token')!;
      expect((await fetch(`${logged.url}${url.pathname}?token=${token}`)).status).toBe(200);
      await fetch(`${logged.url}${url.pathname}/return?token=${token}`, { redirect: 'manual' });
      const log = lines.join('');
      expect(log).toContain(`${url.pathname}?token=[redacted]`);
      expect(log).not.toContain(token);
    } finally {
      await logged.close();
    }
  });
});

describe('paths reach a handler only as their route spells them', () => {
  test('another case or a trailing slash is 404/405, never the handler', async () => {
    const user = newUser();
    const as = (method: string, path: string, body?: object) => call(walletApp().url, method, path, { token: tokenOf(user), body });
    for (const path of [`/wallets/USERS/${user.ref}/topup`, `/wallets/users/${user.ref}/TOPUP`, `/wallets/users/${user.ref}/topup/`]) {
      expect([404, 405]).toContain((await as('POST', path, topUpBody())).status);
    }
    expect([404, 405]).toContain((await as('POST', '/v1/wallet/TRANSFERS', { toUserId: newUser().id, amount: 1, currency: 'ETB' })).status);
    expect((await as('GET', '/wallets/BANKS')).status).toBe(404);
    expect((await as('GET', '/wallets/CHECKOUT/MKT-TOP-UP-AAAAAAAA?token=x')).status).toBe(404);
    expect(await TopUp.countDocuments({ userId: user.id })).toBe(0);
    expect((await topUp(user, topUpBody())).status).toBe(200);
  });
});
