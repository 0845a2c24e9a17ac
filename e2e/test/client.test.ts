import { ApiError, MarketplaceClient } from '@mkt/client';
import { call, makeKeyPair, signTestToken } from '@mkt/infra';
import { bookingBody, dayFromNow, fund, loginAdmin, offerConsultation, register, slotsOf } from './fixtures';
import { eventually, startSystem, type System } from './system';

/**
 * The SDK (@mkt/client) against the real system: the gateway's refresh-token rotation, the
 * wallet's Idempotency-Key, the error envelope with its request id, a paged listing, the sandbox
 * checkout. The system is started with a key pair of this test's, so that it can sign an access
 * token that has already expired (the gateway's shortest lifetime is a minute).
 */
const keys = makeKeyPair();
let system: System;
beforeAll(async () => {
  system = await startSystem({ env: { JWT_PUBLIC_KEY: keys.publicKey }, envOf: { gateway: { JWT_PRIVATE_KEY: keys.privateKey } } });
}, 90_000);
afterAll(() => system?.stop());

const client = () => new MarketplaceClient({ baseUrl: system.gateway, timeoutMs: 20_000 });
const email = (role: string) => `${role}-${Math.random().toString(36).slice(2, 10)}@example.com`;

async function registered(role: 'buyer' | 'seller') {
  const sdk = client();
  const address = email(role);
  const session = await sdk.register({ email: address, password: 'a long password', fullName: `A ${role}`, role });
  return { sdk, session, email: address };
}

describe('@mkt/client against the system', () => {
  test('an expired access token: one refresh for concurrent calls, each retried, the rotated refresh token kept (the old one is spent)', async () => {
    const { session, email: address } = await registered('buyer');
    const expired = signTestToken(
      keys.privateKey,
      { id: session.user.id, ref: session.user.referenceId, role: 'buyer', email: address, name: 'A buyer' },
      { expiresIn: -30 },
    );
    // The gateway refuses the expired token itself.
    expect((await call(system.gateway, 'GET', '/v1/auth/me', { token: expired })).status).toBe(401);

    const rotations: string[] = [];
    const sdk = new MarketplaceClient({
      baseUrl: system.gateway,
      tokens: { accessToken: expired, refreshToken: session.refreshToken },
      onTokens: (tokens) => rotations.push(tokens?.refreshToken ?? 'gone'),
    });
    const answers = await Promise.all([1, 2, 3].map(() => sdk.ok(sdk.api.GET('/v1/auth/me'))));
    expect(answers.map((a) => a.data.id)).toEqual([session.user.id, session.user.id, session.user.id]);
    expect(rotations).toHaveLength(1);
    expect(sdk.tokens!.refreshToken).toBe(rotations[0]);
    expect(sdk.tokens!.refreshToken).not.toBe(session.refreshToken);

    // The kept refresh token is the live one: it rotates again.
    const again = await sdk.refresh();
    expect(again.refreshToken).not.toBe(rotations[0]);

    // The first one was spent by the rotation: presenting it again is refused (and, as reuse of a
    // rotated token, revokes the family: the SDK's current pair dies with it).
    const reuse = await call(system.gateway, 'POST', '/v1/auth/refresh', { body: { refreshToken: session.refreshToken } });
    expect(reuse.status).toBe(401);
    const refused = (await sdk.refresh().catch((e: unknown) => e)) as ApiError;
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused.status).toBe(401);
    expect(sdk.tokens).toBeUndefined();
  });

  test('Idempotency-Key: a fresh one per call, the same given key answers the first top-up again; the sandbox checkout pays it', async () => {
    const { sdk, session } = await registered('buyer');
    await eventually(
      () => sdk.api.GET('/v1/wallet'),
      (res) => res.response.status === 200,
    );
    const topUp = (key?: string) =>
      sdk.ok(
        sdk.api.POST('/wallets/users/{userReferenceId}/topup', {
          params: { path: { userReferenceId: session.user.referenceId }, ...(key ? { header: { 'Idempotency-Key': key } } : {}) },
          body: { amount: 300, paymentMethod: 'Chapa', redirectUrl: 'http://localhost:3000/done' },
        }),
      );
    const [a, b] = [await topUp(), await topUp()];
    expect(a.data.referenceId).not.toBe(b.data.referenceId);
    const key = `sdk-test-${Math.random().toString(36).slice(2)}`;
    const [c, d] = [await topUp(key), await topUp(key)];
    expect(d.data.referenceId).toBe(c.data.referenceId);

    const outcome = await sdk.payInSandbox(c.data.paymentUrl);
    expect(outcome.status).toBe('Completed');
    const { value: wallet } = await eventually(
      () => sdk.ok(sdk.api.GET('/v1/wallet')),
      (res) => res.data.etbAvailableBalance === 300,
      10_000,
    );
    expect(wallet.data.etbAvailableBalance).toBe(300);
    // Paid once: the checkout of a paid top-up is not a page any more.
    const again = (await sdk.payInSandbox(c.data.paymentUrl).catch((e: unknown) => e)) as ApiError;
    expect(again).toBeInstanceOf(ApiError);
    expect(again.status).toBe(409);
  });

  test('a booking whose answer is lost is sent again by the SDK with the same Idempotency-Key: one booking, one hold', async () => {
    const [seller, buyer, admin] = await Promise.all([register(system, 'seller'), register(system, 'buyer'), loginAdmin(system)]);
    await fund(system, [buyer], 500);
    const offer = await offerConsultation(system, seller, admin, { priceMajor: 100, capacity: 5 });
    const body = bookingBody(offer, slotsOf(offer, dayFromNow(3))[0]!, buyer.email);
    // The first answer is lost on the way back (a time-out after the server acted): the SDK sends
    // the booking again with the same key, and the gateway answers the first booking.
    let lose = true;
    const sentKeys: string[] = [];
    const sdk = new MarketplaceClient({
      baseUrl: system.gateway,
      tokens: { accessToken: buyer.token, refreshToken: 'unused' },
      initialRetryDelayMs: 50,
      fetch: async (request) => {
        if (request.method === 'POST') sentKeys.push(request.headers.get('idempotency-key') ?? 'none');
        const response = await fetch(request);
        if (!lose || request.method !== 'POST') return response;
        lose = false;
        throw new Error('timed out');
      },
    });
    const booked = await sdk.ok(sdk.api.POST('/consultations/bookings', { body }));
    expect(booked.data.status).toBe('Confirmed');
    expect(sentKeys).toHaveLength(2);
    expect(sentKeys[1]).toBe(sentKeys[0]);
    // The app calling again later with that key (a retry across processes) gets the same booking.
    const again = await sdk.ok(sdk.api.POST('/consultations/bookings', { body, params: { header: { 'Idempotency-Key': sentKeys[0]! } } }));
    expect(again.data.bookingId).toBe(booked.data.bookingId);
    const listed = await sdk.ok(sdk.api.GET('/consultations/bookings'));
    expect(listed.data.bookings.map((b) => b.id)).toEqual([booked.data.bookingId]);
    const wallet = await sdk.ok(sdk.api.GET('/v1/wallet'));
    expect(wallet.data).toMatchObject({ etbAvailableBalance: 400, heldBalance: 100 });
  });

  test('one transfer sent concurrently under one key: the attempts answered 409 in progress are retried, all answer the one transfer, the money moves once', async () => {
    const [payer, payee] = await Promise.all([register(system, 'buyer'), register(system, 'buyer')]);
    await fund(system, [payer], 500);
    await eventually(
      () => call(system.gateway, 'GET', '/v1/wallet', { token: payee.token }),
      (res) => res.status === 200,
    );
    const statuses: number[] = [];
    const sdk = new MarketplaceClient({
      baseUrl: system.gateway,
      tokens: { accessToken: payer.token, refreshToken: 'unused' },
      initialRetryDelayMs: 100,
      maxNetworkRetries: 5,
      fetch: async (request) => {
        const response = await fetch(request);
        if (request.method === 'POST') statuses.push(response.status);
        return response;
      },
    });
    const key = `transfer-${Math.random().toString(36).slice(2)}`;
    const body = { toUserId: payee.id, amount: 12_000, currency: 'ETB' as const };
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        sdk.ok(sdk.api.POST('/v1/wallet/transfers', { body, params: { header: { 'Idempotency-Key': key } } })),
      ),
    );
    expect(new Set(answers.map((a) => a.data.id)).size).toBe(1);
    // Every attempt ended in the one answer or a 409 in progress that was sent again.
    expect(statuses.filter((status) => status !== 200 && status !== 409)).toEqual([]);
    const balance = async (token: string) => (await call(system.gateway, 'GET', '/v1/wallet', { token })).body.data.etbAvailableBalance;
    expect(await balance(payer.token)).toBe(380);
    expect(await balance(payee.token)).toBe(120);
  });

  test('ApiError carries the envelope and the request id; a listing is read page by page', async () => {
    const { sdk } = await registered('seller');
    const bad = (await sdk
      .ok(sdk.api.POST('/consultations/pricing', { body: { basePrice: -5, currency: 'ETB' } }))
      .catch((e: unknown) => e)) as ApiError;
    expect(bad).toBeInstanceOf(ApiError);
    expect(bad.status).toBe(400);
    expect(bad.code).toBe('invalid');
    expect(bad.details.map((d) => d.path)).toContain('basePrice');
    expect(bad.requestId).toEqual(expect.any(String));
    expect(bad.operation).toBe('POST /consultations/pricing');

    const names = ['One', 'Two', 'Three', 'Four', 'Five'];
    for (const name of names) {
      await sdk.ok(
        sdk.api.POST('/consultations/availability-rule-sets/rule-sets', {
          body: {
            name,
            timezone: 'Africa/Addis_Ababa',
            availabilityRules: [
              { type: 'weekly', weekday: 'monday', intervals: [{ start_time: '09:00:00', end_time: '10:00:00', enabled: true }] },
            ],
          },
        }),
      );
    }
    const pages = [];
    for await (const page of sdk.pages('/consultations/availability-rule-sets/rule-sets', {}, { limit: 2 })) pages.push(page);
    expect(pages.map((p) => p.items.length)).toEqual([2, 2, 1]);
    expect(pages.every((p) => p.total === 5)).toBe(true);
    const listed = [];
    for await (const ruleSet of sdk.items('/consultations/availability-rule-sets/rule-sets', {}, { limit: 3 }))
      listed.push((ruleSet as { name: string }).name);
    expect(listed.sort()).toEqual([...names].sort());
  });
});
