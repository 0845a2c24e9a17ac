import { ENDPOINTS, successBodySchema } from '@mkt/contracts';
import { call, newUser, tokenOf, useWallet } from './harness';

const MERCHANT = '<script>alert("merchant")</script> Shop & Co';
const walletApp = useWallet({ MERCHANT_NAME: MERCHANT });

type User = ReturnType<typeof newUser>;
const admin = newUser('admin');

const get = (user: User, path: string) => call(walletApp().url, 'GET', path, { token: tokenOf(user) });
const receipt = (user: User, ref: string) => get(user, `/v1/wallet/topups/${ref}/receipt`);
const page = (user: User, ref: string) => get(user, `/v1/wallet/topups/${ref}/receipt.html`);
const receiptSchema = successBodySchema(ENDPOINTS.find((e) => e.operationId === 'getTopupReceipt')!)!;

/** A top-up created by `user`; paid on the sandbox checkout as a browser pays it unless `pay` is false. */
async function topUp(user: User, amount: number, pay = true): Promise<string> {
  const created = await call(walletApp().url, 'POST', `/wallets/users/${user.ref}/topup`, {
    token: tokenOf(user),
    body: { amount, paymentMethod: 'Chapa', redirectUrl: 'https://shop.example/after-pay' },
  });
  expect(created.status).toBe(200);
  if (!pay) return created.body.data.referenceId;
  const url = new URL(created.body.data.paymentUrl);
  const paid = await fetch(`${walletApp().url}${url.pathname}/pay`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: url.searchParams.get('token')! }).toString(),
  });
  expect(paid.status).toBe(303);
  return created.body.data.referenceId;
}

describe('top-up receipts', () => {
  it('its owner reads the receipt of a completed top-up: amount, method, times, wallet and owner', async () => {
    const owner = newUser();
    const ref = await topUp(owner, 300.5);
    const res = await receipt(owner, ref);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    expect(receiptSchema.safeParse(res.body).success).toBe(true);
    const wallet = await get(owner, '/v1/wallet');
    expect(res.body.data).toEqual({
      referenceId: ref,
      amountMinor: 30050,
      amount: 300.5,
      currency: 'ETB',
      paymentMethod: 'Chapa',
      status: 'Completed',
      createdAt: expect.any(String),
      completedAt: expect.any(String),
      walletReferenceId: wallet.body.data.referenceId,
      ownerId: owner.id,
    });
    expect(Date.parse(res.body.data.completedAt)).toBeGreaterThanOrEqual(Date.parse(res.body.data.createdAt));
  });

  it('an admin reads anyone’s receipt; another user gets 404, as for a top-up that does not exist', async () => {
    const owner = newUser();
    const stranger = newUser('seller');
    const ref = await topUp(owner, 120);
    expect((await receipt(admin, ref)).body.data.ownerId).toBe(owner.id);
    for (const res of [await receipt(stranger, ref), await page(stranger, ref), await receipt(owner, 'MKT-TOP-UP-ZZZZZZZZ')]) {
      expect(res.status).toBe(404);
      expect(res.body.errors[0].code).toBe('not_found');
      expect(JSON.stringify(res.body)).not.toContain('30050');
    }
    // The stranger's answer and the unknown reference's are the same answer.
    const unknown = await receipt(stranger, 'MKT-TOP-UP-ZZZZZZZZ');
    expect(unknown.body.message).toBe((await receipt(stranger, ref)).body.message);
  });

  it('a top-up that is not completed has no receipt (409 invalid_state to its owner, still 404 to others)', async () => {
    const owner = newUser();
    const open = await topUp(owner, 50, false);
    const res = await receipt(owner, open);
    expect(res.status).toBe(409);
    expect(res.body.errors[0].code).toBe('invalid_state');
    expect((await page(owner, open)).status).toBe(409);
    expect((await receipt(newUser(), open)).status).toBe(404);
  });

  it('the page is self-contained HTML with every value escaped and a policy that runs no script', async () => {
    const owner = newUser();
    const ref = await topUp(owner, 75);
    const res = await fetch(`${walletApp().url}/v1/wallet/topups/${ref}/receipt.html`, {
      headers: { authorization: `Bearer ${tokenOf(owner)}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/style-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).not.toMatch(/script-src|unsafe-inline|unsafe-eval/);
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    const html = await res.text();
    expect(html).not.toContain('<script');
    expect(html).toContain('&lt;script&gt;alert(&quot;merchant&quot;)&lt;/script&gt; Shop &amp; Co');
    expect(html).toContain(ref);
    expect(html).toContain('75.00 ETB');
    expect(html).not.toMatch(/<(link|img|iframe)\b|src=|href=/);
  });

  it('a receipt needs a token and a well-formed reference', async () => {
    expect((await call(walletApp().url, 'GET', '/v1/wallet/topups/MKT-TOP-UP-ZZZZZZZZ/receipt')).status).toBe(401);
    expect((await receipt(newUser(), 'not-a-reference')).status).toBe(400);
  });
});
