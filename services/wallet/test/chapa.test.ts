import { createHmac } from 'node:crypto';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { balancesOf, call, disconnectDatabase, newUser, startWallet, tokenOf, TopUp, type WalletApp } from './harness';

const WEBHOOK_SECRET = 'whsec_test_0123456789';
const SECRET_KEY = 'CHASECK_TEST-abc';

/** A local stand-in for Chapa's API: same paths and shapes; payments are set by the test. */
const payments = new Map<string, { status: 'success' | 'failed' | 'pending'; amount: string }>();
let fake: Server;
const initialized: Array<Record<string, unknown>> = [];

function startFakeChapa(): Promise<Server> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      if (req.headers.authorization !== `Bearer ${SECRET_KEY}`) {
        res.statusCode = 401;
        return res.end(JSON.stringify({ status: 'failed', message: 'Invalid API Key' }));
      }
      if (req.method === 'POST' && req.url === '/v1/transaction/initialize') {
        const parsed = JSON.parse(body);
        initialized.push(parsed);
        payments.set(parsed.tx_ref, { status: 'pending', amount: parsed.amount });
        return res.end(
          JSON.stringify({
            status: 'success',
            message: 'Hosted Link',
            data: { checkout_url: `https://checkout.chapa.test/${parsed.tx_ref}` },
          }),
        );
      }
      const verify = /^\/v1\/transaction\/verify\/(.+)$/.exec(req.url ?? '');
      const payment = verify ? payments.get(decodeURIComponent(verify[1]!)) : undefined;
      if (verify && payment) {
        return res.end(
          JSON.stringify({
            status: 'success',
            data: { status: payment.status, amount: payment.amount, currency: 'ETB', tx_ref: verify[1] },
          }),
        );
      }
      res.statusCode = 404;
      res.end(JSON.stringify({ status: 'failed', message: 'Invalid transaction', data: null }));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

let wallet: WalletApp;
beforeAll(async () => {
  fake = await startFakeChapa();
  wallet = await startWallet({
    PAYMENT_PROVIDER: 'chapa',
    CHAPA_BASE_URL: `http://127.0.0.1:${(fake.address() as AddressInfo).port}`,
    CHAPA_SECRET_KEY: SECRET_KEY,
    CHAPA_WEBHOOK_SECRET: WEBHOOK_SECRET,
  });
});
afterAll(async () => {
  await wallet.close();
  await new Promise((resolve) => fake.close(resolve));
  await disconnectDatabase();
});

async function chapaTopUp() {
  const user = newUser();
  const res = await call(wallet.url, 'POST', `/wallets/users/${user.ref}/topup`, {
    token: tokenOf(user),
    body: { amount: 200, paymentMethod: 'Chapa', redirectUrl: 'https://shop.example/back' },
  });
  return { user, reference: res.body.data.referenceId as string, res };
}

function webhook(payload: object, signature?: string) {
  const raw = JSON.stringify(payload);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (signature !== undefined) headers['x-chapa-signature'] = signature;
  return call(wallet.url, 'POST', '/wallets/webhooks/chapa', { raw, headers });
}
const sign = (payload: object) => createHmac('sha256', WEBHOOK_SECRET).update(JSON.stringify(payload)).digest('hex');

describe('the Chapa provider', () => {
  test('initialize sends amount, currency, tx_ref and our callback and return addresses', async () => {
    const { reference, res } = await chapaTopUp();
    expect(res.body.data.paymentUrl).toBe(`https://checkout.chapa.test/${reference}`);
    expect(initialized.find((body) => body.tx_ref === reference)).toMatchObject({
      amount: '200.00',
      currency: 'ETB',
      callback_url: 'http://localhost:8080/wallets/webhooks/chapa',
      return_url: expect.stringMatching(new RegExp(`^http://localhost:8080/wallets/checkout/${reference}/return\\?token=[\\w-]{32,}$`)),
    });
  });

  test('a signed webhook for a verified payment credits once, however often it arrives', async () => {
    const { user, reference } = await chapaTopUp();
    payments.set(reference, { status: 'success', amount: '200.00' });
    const payload = { tx_ref: reference, status: 'success', event: 'charge.success' };
    const first = await webhook(payload, sign(payload));
    expect(first.status).toBe(200);
    await Promise.all([webhook(payload, sign(payload)), webhook(payload, sign(payload))]);
    expect(await balancesOf(user)).toEqual({ available: 20000, held: 0 });
    expect((await TopUp.findOne({ referenceId: reference }).lean())?.status).toBe('Completed');
  });

  test('a bad or missing signature is 401 and credits nothing', async () => {
    const { user, reference } = await chapaTopUp();
    payments.set(reference, { status: 'success', amount: '200.00' });
    const payload = { tx_ref: reference, status: 'success' };
    expect((await webhook(payload, createHmac('sha256', 'wrong').update(JSON.stringify(payload)).digest('hex'))).status).toBe(401);
    expect((await webhook(payload)).status).toBe(401);
    expect((await webhook(payload, 'zz')).status).toBe(401);
    expect(await balancesOf(user)).toEqual({ available: 0, held: 0 });
  });

  test('a webhook is only a hint: verify says failed → Failed, no credit', async () => {
    const { user, reference } = await chapaTopUp();
    payments.set(reference, { status: 'failed', amount: '200.00' });
    const payload = { tx_ref: reference, status: 'success' };
    expect((await webhook(payload, sign(payload))).status).toBe(200);
    expect((await TopUp.findOne({ referenceId: reference }).lean())?.status).toBe('Failed');
    expect(await balancesOf(user)).toEqual({ available: 0, held: 0 });
  });

  test('verify reporting another amount credits nothing', async () => {
    const { user, reference } = await chapaTopUp();
    payments.set(reference, { status: 'success', amount: '2.00' });
    const payload = { tx_ref: reference };
    await webhook(payload, sign(payload));
    expect(await balancesOf(user)).toEqual({ available: 0, held: 0 });
  });

  test('reconciliation completes a payment whose webhook never came', async () => {
    const { user, reference } = await chapaTopUp();
    payments.set(reference, { status: 'success', amount: '200.00' });
    await wallet.parts.topUps.reconcile(new Date(Date.now() + 120_000));
    expect(await balancesOf(user)).toEqual({ available: 20000, held: 0 });
  });

  test('the return address needs its token and sends the payer on to the client with the status', async () => {
    const { reference } = await chapaTopUp();
    const returnUrl = new URL(String(initialized.find((body) => body.tx_ref === reference)!.return_url));
    expect(`${returnUrl.origin}${returnUrl.pathname}`).toBe(`http://localhost:8080/wallets/checkout/${reference}/return`);
    const token = returnUrl.searchParams.get('token')!;
    expect(token.length).toBeGreaterThanOrEqual(32);
    const back = (query: string) => fetch(`${wallet.url}/wallets/checkout/${reference}/return${query}`, { redirect: 'manual' });
    const res = await back(`?token=${token}`);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`https://shop.example/back?status=Processing&reference=${reference}`);
    for (const query of ['', '?token=', '?token=forged-token-of-some-length']) {
      const refused = await back(query);
      expect(refused.status).toBe(404);
      expect(refused.headers.get('location')).toBeNull();
      expect(await refused.text()).not.toContain('Processing');
    }
  });
});
