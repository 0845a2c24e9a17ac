import { balancesOf, call, env, ledgerMatches, newUser, startWallet, tokenOf, TopUp, useWallet, Wallet } from './harness';
import { listenForEvents, testServers } from '@mkt/infra';

const walletApp = useWallet();

const topUpBody = { amount: 150.5, paymentMethod: 'Chapa', redirectUrl: 'https://shop.example/after-pay', notes: 'for a consultation' };

async function createTopUp(user = newUser(), body: object = topUpBody, headers: Record<string, string> = {}) {
  const res = await call(walletApp().url, 'POST', `/wallets/users/${user.ref}/topup`, { token: tokenOf(user), body, headers });
  return { user, res };
}

/** Opens the checkout link as a browser would and reads the token out of it. */
function checkoutParts(paymentUrl: string) {
  const url = new URL(paymentUrl);
  return { path: url.pathname, token: url.searchParams.get('token')! };
}

async function postForm(path: string, token: string) {
  return fetch(`${walletApp().url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }).toString(),
  });
}

describe('POST /wallets/users/:ref/topup', () => {
  test('creates a Processing top-up with a hosted checkout address', async () => {
    const { user, res } = await createTopUp();
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      message: 'Top-up created',
      data: { amount: 150.5, status: 'Processing', paymentMethod: 'Chapa', wallet: { etbAvailableBalance: 0 } },
    });
    expect(res.body.data.referenceId).toMatch(/^MKT-TOP-UP-[A-Z0-9]{8}$/);
    expect(res.body.data.wallet.referenceId).toMatch(/^MKT-USR-WAL-[A-Z0-9]{8}$/);
    expect(res.body.data.paymentUrl).toMatch(
      new RegExp(`^http://localhost:8080/wallets/checkout/${res.body.data.referenceId}\\?token=.{40,}$`),
    );
    const status = await call(walletApp().url, 'GET', `/wallets/topup/${res.body.data.referenceId}/status`, { token: tokenOf(user) });
    expect(status.body.data).toEqual({
      referenceId: res.body.data.referenceId,
      amount: 150.5,
      status: 'Processing',
      paymentMethod: 'Chapa',
      completedAt: null,
    });
  });

  test.each([
    [{ ...topUpBody, amount: 0 }, 'amount'],
    [{ ...topUpBody, amount: -5 }, 'amount'],
    [{ ...topUpBody, amount: 10.123 }, 'amount'],
    [{ ...topUpBody, amount: '10' }, 'amount'],
    [{ ...topUpBody, paymentMethod: 'Gateway' }, 'paymentMethod'],
    [{ ...topUpBody, redirectUrl: 'javascript:alert(1)' }, 'redirectUrl'],
    [{ ...topUpBody, extra: true }, 'extra'],
  ])('%j is refused with 400 on %s and creates nothing', async (body, path) => {
    const user = newUser();
    const { res } = await createTopUp(user, body);
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    expect(await TopUp.countDocuments({ userId: user.id })).toBe(0);
  });

  test('someone else’s wallet is 403, an unknown one for an admin 404, no token 401', async () => {
    const owner = newUser();
    await createTopUp(owner);
    const other = await call(walletApp().url, 'POST', `/wallets/users/${owner.ref}/topup`, { token: tokenOf(newUser()), body: topUpBody });
    expect(other.status).toBe(403);
    const admin = await call(walletApp().url, 'POST', `/wallets/users/${newUser().ref}/topup`, {
      token: tokenOf(newUser('admin')),
      body: topUpBody,
    });
    expect(admin.status).toBe(404);
    expect((await call(walletApp().url, 'POST', `/wallets/users/${owner.ref}/topup`, { body: topUpBody })).status).toBe(401);
    const status = await call(walletApp().url, 'GET', '/wallets/topup/MKT-TOP-UP-ZZZZZZZZ/status', { token: tokenOf(owner) });
    expect(status.status).toBe(404);
  });

  test('the same Idempotency-Key replays the first answer; with another body it is 409', async () => {
    const user = newUser();
    const first = await createTopUp(user, topUpBody, { 'idempotency-key': 'key-1' });
    const again = await createTopUp(user, topUpBody, { 'idempotency-key': 'key-1' });
    expect(again.res.body).toEqual(first.res.body);
    expect(await TopUp.countDocuments({ userId: user.id })).toBe(1);
    const other = await createTopUp(user, { ...topUpBody, amount: 20 }, { 'idempotency-key': 'key-1' });
    expect(other.res.status).toBe(409);
  });
});

describe('the sandbox hosted checkout', () => {
  test('renders the amount and merchant, Pay credits once and redirects with the status', async () => {
    const { user, res } = await createTopUp();
    const { path, token } = checkoutParts(res.body.data.paymentUrl);
    const page = await fetch(`${walletApp().url}${path}?token=${token}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('150.50 ETB');
    expect(html).toContain('Marketplace');
    expect(html).toContain(`${path}/pay`);

    const paid = await postForm(`${path}/pay`, token);
    expect(paid.status).toBe(303);
    const back = new URL(paid.headers.get('location')!);
    expect(`${back.origin}${back.pathname}`).toBe('https://shop.example/after-pay');
    expect(Object.fromEntries(back.searchParams)).toEqual({ status: 'Completed', reference: res.body.data.referenceId });
    expect(await balancesOf(user)).toEqual({ available: 15050, held: 0 });

    const replay = await postForm(`${path}/pay`, token);
    expect(replay.status).toBe(409);
    expect(await balancesOf(user)).toEqual({ available: 15050, held: 0 });
    expect((await fetch(`${walletApp().url}${path}?token=${token}`)).status).toBe(409);

    const status = await call(walletApp().url, 'GET', `/wallets/topup/${res.body.data.referenceId}/status`, { token: tokenOf(user) });
    expect(status.body.data.status).toBe('Completed');
    expect(Date.parse(status.body.data.completedAt)).not.toBeNaN();
    expect(await ledgerMatches(user)).toBe(true);
  });

  test('a forged token opens nothing and pays nothing', async () => {
    const { user, res } = await createTopUp();
    const { path } = checkoutParts(res.body.data.paymentUrl);
    expect((await fetch(`${walletApp().url}${path}?token=forged`)).status).toBe(404);
    expect((await postForm(`${path}/pay`, 'forged')).status).toBe(404);
    expect((await fetch(`${walletApp().url}/wallets/checkout/MKT-TOP-UP-ZZZZZZZZ?token=x`)).status).toBe(404);
    expect(await balancesOf(user)).toEqual({ available: 0, held: 0 });
  });

  test('Cancel cancels without money and redirects', async () => {
    const { user, res } = await createTopUp();
    const { path, token } = checkoutParts(res.body.data.paymentUrl);
    const cancelled = await postForm(`${path}/cancel`, token);
    expect(cancelled.status).toBe(303);
    expect(new URL(cancelled.headers.get('location')!).searchParams.get('status')).toBe('Cancelled');
    expect((await postForm(`${path}/pay`, token)).status).toBe(409);
    expect(await balancesOf(user)).toEqual({ available: 0, held: 0 });
  });

  test('an abandoned top-up expires: its page says so and the sweep marks it Expired', async () => {
    const { res } = await createTopUp();
    await TopUp.updateOne({ referenceId: res.body.data.referenceId }, { $set: { expiresAt: new Date(Date.now() - 1000) } });
    const { path, token } = checkoutParts(res.body.data.paymentUrl);
    expect((await fetch(`${walletApp().url}${path}?token=${token}`)).status).toBe(409);
    await walletApp().parts.topUps.reconcile(new Date(Date.now() + 120_000));
    expect((await TopUp.findOne({ referenceId: res.body.data.referenceId }).lean())?.status).toBe('Expired');
  });

  test('completion publishes wallet.topup.completed', async () => {
    const events = await listenForEvents(testServers().amqpUrl, env.events, ['wallet.topup.completed']);
    const { user, res } = await createTopUp();
    const { path, token } = checkoutParts(res.body.data.paymentUrl);
    await postForm(`${path}/pay`, token);
    const event = (
      await events.waitFor(
        (e) => e.json.data.reference === res.body.data.referenceId,
        `wallet.topup.completed of ${res.body.data.referenceId}`,
      )
    ).json;
    await events.close();
    expect(event).toMatchObject({
      type: 'wallet.topup.completed',
      data: { reference: res.body.data.referenceId, userId: user.id, amountMinor: 15050, status: 'Completed' },
    });
  });
});

describe('limits', () => {
  test('over the daily limit is 429 with Retry-After, nothing is created, and the stats say so', async () => {
    const limited = await startWallet({ LIMIT_DAILY: '2' });
    try {
      const user = newUser();
      const create = () => call(limited.url, 'POST', `/wallets/users/${user.ref}/topup`, { token: tokenOf(user), body: topUpBody });
      expect((await create()).status).toBe(200);
      expect((await create()).status).toBe(200);
      const third = await create();
      expect(third.status).toBe(429);
      expect(third.body.errors[0].code).toBe('rate_limited');
      expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await TopUp.countDocuments({ userId: user.id })).toBe(2);
      const stats = await call(limited.url, 'GET', '/wallets/rate-limit/stats', { token: tokenOf(user) });
      expect(stats.body.data).toEqual({
        daily: { count: 2, limit: 2, remaining: 0 },
        weekly: { count: 2, limit: 10000, remaining: 9998 },
        monthly: { count: 2, limit: 10000, remaining: 9998 },
      });
    } finally {
      await limited.close();
    }
  });
});

describe('the wallet itself', () => {
  test('GET /v1/wallet opens it on first use and shows its balances', async () => {
    const user = newUser();
    const res = await call(walletApp().url, 'GET', '/v1/wallet', { token: tokenOf(user) });
    expect(res.body.data).toMatchObject({ userId: user.id, currency: 'ETB', etbAvailableBalance: 0, heldBalance: 0 });
    expect(await Wallet.countDocuments({ userId: user.id })).toBe(1);
  });

  test('banks: the seeded Ethiopian list with every field', async () => {
    const res = await call(walletApp().url, 'GET', '/wallets/banks', { token: tokenOf(newUser()) });
    expect(res.status).toBe(200);
    const cbe = res.body.data.find((bank: { code: string }) => bank.code === 'CBE');
    expect(cbe).toEqual({
      id: expect.any(String),
      name: 'Commercial Bank of Ethiopia',
      code: 'CBE',
      bank_code: 'CBE',
      country: 'ET',
      swift_code: 'CBETETAA',
      account_length: 13,
      is_mobile_money: false,
      is_active: true,
      is_rtgs: true,
      is_24hrs: true,
      currency: 'ETB',
    });
    expect(res.body.data.some((bank: { is_mobile_money: boolean }) => bank.is_mobile_money)).toBe(true);
  });

  test('health and readiness', async () => {
    expect((await call(walletApp().url, 'GET', '/healthz')).status).toBe(200);
    expect((await call(walletApp().url, 'GET', '/readyz')).status).toBe(200);
  });
});
