import { execFile } from 'node:child_process';
import http, { type Server } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser } from 'playwright-core';
import { call, ensureChromium, listenOnFreePort, type Listening } from '@mkt/infra';
import { startSystem, type System } from './system';

const artifacts = join(__dirname, '..', 'artifacts');
let system: System;
let browser: Browser;
let shop: Listening;
/** A web app of the test's own: a page that loads the SDK as ES modules, and the SDK compiled so. */
let app: Listening;
let sdkBuild = '';

/**
 * The SDK's sources compiled to ES modules for the browser's lib (no Node.js types): what a
 * bundler would hand a page, without one.
 */
async function buildSdkForBrowser(): Promise<string> {
  const out = mkdtempSync(join(tmpdir(), 'mkt-client-browser-'));
  const root = join(__dirname, '../..');
  writeFileSync(
    join(out, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'ES2022',
        moduleResolution: 'Bundler',
        lib: ['ES2022', 'DOM', 'DOM.Iterable'],
        types: [],
        strict: true,
        skipLibCheck: true,
        rootDir: join(root, 'packages/client/src'),
        outDir: join(out, 'sdk'),
      },
      files: [join(root, 'packages/client/src/index.ts')],
    }),
  );
  const tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
  await promisify(execFile)(process.execPath, [tsc, '-p', join(out, 'tsconfig.json')]).catch((e: { stdout?: string }) => {
    throw new Error(`compiling the SDK for the browser failed:\n${e.stdout ?? String(e)}`);
  });
  return out;
}

/** Serves the page (an import map naming openapi-fetch's ES module), the SDK's modules and openapi-fetch. */
function webApp(build: string) {
  const openapiFetch = join(
    dirname(require.resolve('openapi-fetch/package.json', { paths: [join(__dirname, '../../packages/client')] })),
    'dist/index.mjs',
  );
  const page = `<!doctype html><html><head><title>An app</title>
<script type="importmap">{ "imports": { "openapi-fetch": "/vendor/openapi-fetch.mjs" } }</script></head><body><h1>An app</h1></body></html>`;
  return http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const js = (file: string) => {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      res.end(readFileSync(file));
    };
    if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html' });
      return res.end(page);
    }
    if (path === '/vendor/openapi-fetch.mjs') return js(openapiFetch);
    if (path.startsWith('/sdk/')) {
      // tsc keeps the sources' extensionless specifiers ('./client'): a bundler's resolution.
      const file = normalize(join(build, path));
      if (!file.startsWith(join(build, 'sdk'))) return res.writeHead(404).end();
      if (existsSync(file) && file.endsWith('.js')) return js(file);
      if (existsSync(`${file}.js`)) return js(`${file}.js`);
    }
    res.writeHead(404).end();
  });
}

beforeAll(async () => {
  mkdirSync(artifacts, { recursive: true });
  const executablePath = await ensureChromium((line) => process.stdout.write(`${line}\n`));
  [system, browser, sdkBuild] = await Promise.all([
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
    buildSdkForBrowser(),
  ]);
  app = await listenOnFreePort(webApp(sdkBuild) as unknown as { listen: (port: number, host: string, ready: () => void) => Server });
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
  await app?.close();
  if (sdkBuild) rmSync(sdkBuild, { recursive: true, force: true });
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

  test('the SDK in a page of another origin (ES modules, CORS): register, a read, an error with its request id, a top-up with an Idempotency-Key', async () => {
    const page = await browser.newPage();
    const keys: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().endsWith('/topup')) keys.push(request.headers()['idempotency-key'] ?? 'none');
    });
    await page.goto(app.url);
    // A string, not a function: the test's compiler would turn its import() into require().
    const result = (await page.evaluate(`(async () => {
      const { ApiError, MarketplaceClient } = await import('/sdk/index.js');
      const sdk = new MarketplaceClient({ baseUrl: ${JSON.stringify(system.gateway)}, initialRetryDelayMs: 200 });
      const session = await sdk.register({
        email: 'page-' + Math.random().toString(36).slice(2) + '@example.com',
        password: 'a long password',
        fullName: 'Page Buyer',
        role: 'buyer',
      });
      const me = await sdk.ok(sdk.api.GET('/v1/auth/me'));
      const bad = await sdk.ok(sdk.api.POST('/v1/wallet/transfers', { body: { toUserId: 'nobody', amount: -1, currency: 'ETB' } })).catch((e) => e);
      for (let i = 0; i < 50 && (await sdk.api.GET('/v1/wallet')).response.status !== 200; i += 1) await new Promise((r) => setTimeout(r, 200));
      const topUp = await sdk.ok(sdk.api.POST('/wallets/users/{userReferenceId}/topup', {
        params: { path: { userReferenceId: session.user.referenceId } },
        body: { amount: 25, paymentMethod: 'Card', redirectUrl: ${JSON.stringify(`${shop.url}/done`)} },
      }));
      return {
        same: me.data.id === session.user.id,
        bad: bad instanceof ApiError ? { status: bad.status, code: bad.code, requestId: typeof bad.requestId } : String(bad),
        reference: topUp.data.referenceId,
        token: sdk.tokens.accessToken,
      };
    })()`)) as { same: boolean; bad: unknown; reference: string; token: string };
    expect(result.same).toBe(true);
    expect(result.bad).toEqual({ status: 400, code: 'invalid', requestId: 'string' });
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const status = await call(system.gateway, 'GET', `/wallets/topup/${result.reference}/status`, { token: result.token });
    expect(status.body.data.status).toBe('Processing'); // awaiting its checkout
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
