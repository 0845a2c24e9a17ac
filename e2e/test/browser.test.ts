import http, { type Server } from 'node:http';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { call, ensureChromium, listenOnFreePort, type Listening } from '@mkt/infra';
import { startSystem, type System } from './system';

const artifacts = join(__dirname, '..', 'artifacts');
let system: System;
let browser: Browser;
let shop: Listening;

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true });
  const executablePath = await ensureChromium((line) => process.stdout.write(`${line}\n`));
  [system, browser] = await Promise.all([
    startSystem(),
    chromium.launch({
      executablePath,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    }),
  ]);
  // The client's site the checkout sends the payer back to.
  shop = await listenOnFreePort(
    http.createServer((_req, res) => res.end('<h1>Back at the shop</h1>')) as unknown as {
      listen: (port: number, host: string, ready: () => void) => Server;
    },
  );
}, 300_000);
afterAll(async () => {
  await browser?.close();
  await shop?.close();
  await system?.stop();
});

async function buyerTopUp(amount: number) {
  const registered = await call(system.gateway, 'POST', '/v1/auth/register', {
    body: {
      email: `b-${Math.random().toString(36).slice(2)}@example.com`,
      password: 'a long password',
      fullName: 'Browser Buyer',
      role: 'buyer',
    },
  });
  const { accessToken: token, user } = registered.body.data;
  const topUp = await call(system.gateway, 'POST', `/wallets/users/${user.referenceId}/topup`, {
    token,
    body: { amount, paymentMethod: 'Card', redirectUrl: `${shop.url}/done` },
  });
  return { token, reference: topUp.body.data.referenceId as string, paymentUrl: topUp.body.data.paymentUrl as string };
}

describe('in a real browser', () => {
  test('the docs page renders the operations', async () => {
    const page = await browser.newPage();
    await page.goto(`${system.gateway}/docs`);
    await page.waitForSelector('.opblock', { timeout: 30_000 });
    expect(await page.locator('.opblock').count()).toBeGreaterThan(60);
    expect(await page.textContent('body')).toContain('/consultations/bookings');
    await page.screenshot({ path: join(artifacts, 'docs.png'), fullPage: false });
    await page.close();
  });

  test('the docs page: "Try it out" on a public read calls the gateway that serves the page and shows its answer', async () => {
    const page = await browser.newPage();
    const refused: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') refused.push(message.text());
    });
    await page.goto(`${system.gateway}/docs`);
    const operation = page.locator('#operations-catalog-listCategories');
    await operation.locator('.opblock-summary-control').click();
    await operation.locator('.try-out__btn').click();
    const [answer] = await Promise.all([
      page.waitForResponse((response) => response.url() === `${system.gateway}/physical-products/categories`, { timeout: 30_000 }),
      operation.locator('.btn.execute').click(),
    ]);
    expect(answer.status()).toBe(200);
    const shown = operation.locator('.live-responses-table .response .response-col_status').first();
    await shown.waitFor({ timeout: 10_000 });
    expect((await shown.textContent())?.trim()).toBe('200');
    expect(await operation.locator('.live-responses-table .response .response-col_description').first().textContent()).toContain(
      '"success": true',
    );
    await operation.screenshot({ path: join(artifacts, 'docs-try-it-out.png') });
    expect(refused).toEqual([]);
    await page.close();
  });

  test('the sandbox checkout: Pay → back at the shop, top-up Completed', async () => {
    const { token, reference, paymentUrl } = await buyerTopUp(42.5);
    const page = await browser.newPage();
    await page.goto(paymentUrl);
    expect(await page.textContent('.amount')).toContain('42.50 ETB');
    await page.screenshot({ path: join(artifacts, 'checkout.png') });
    await Promise.all([page.waitForURL(`${shop.url}/done**`), page.click('button.pay')]);
    const back = new URL(page.url());
    expect(Object.fromEntries(back.searchParams)).toEqual({ status: 'Completed', reference });
    await page.screenshot({ path: join(artifacts, 'checkout-paid.png') });
    await page.close();
    const status = await call(system.gateway, 'GET', `/wallets/topup/${reference}/status`, { token });
    expect(status.body.data.status).toBe('Completed');
    expect((await call(system.gateway, 'GET', '/v1/wallet', { token })).body.data.etbAvailableBalance).toBe(42.5);
  });

  test('the sandbox checkout: Cancel → back at the shop, top-up Cancelled, and the link is closed', async () => {
    const { token, reference, paymentUrl } = await buyerTopUp(10);
    const page = await browser.newPage();
    await page.goto(paymentUrl);
    await Promise.all([page.waitForURL(`${shop.url}/done**`), page.click('button.cancel')]);
    expect(new URL(page.url()).searchParams.get('status')).toBe('Cancelled');
    const reopened = await page.goto(paymentUrl);
    expect(reopened?.status()).toBe(409);
    await page.screenshot({ path: join(artifacts, 'checkout-closed.png') });
    await page.close();
    expect((await call(system.gateway, 'GET', `/wallets/topup/${reference}/status`, { token })).body.data.status).toBe('Cancelled');
  });
});
