import type { Server } from 'node:http';
import { randomInt } from 'node:crypto';
import { disconnectDatabase, startGateway, startUpstream, urlOf, type Gateway } from './harness';
import { call } from './support';

let consultation: Server;
let first: Gateway;
let second: Gateway;

beforeAll(async () => {
  consultation = await startUpstream('consultation');
  // Two replicas of the gateway, as in production: the limit must hold across both.
  const settings = { CONSULTATION_URL: urlOf(consultation), RATE_LIMIT_SLOTS_PER_MIN: '3', TRUST_PROXY: '1', RATE_LIMIT_USER_PER_MIN: '0' };
  [first, second] = await Promise.all([startGateway(settings), startGateway(settings)]);
});
afterAll(async () => {
  await Promise.all([first.close(), second.close()]);
  await new Promise((resolve) => consultation.close(resolve));
  await disconnectDatabase();
});

/** A client address of its own for each test (the limit's windows are calendar minutes). */
const newAddress = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
const slots = (gateway: Gateway, address: string, path = '/consultations/CON-1/slots?from=2030-01-01&to=2030-01-07') =>
  call(gateway.url, 'GET', path, { headers: { 'x-forwarded-for': address } });

/** The limit counts per calendar minute: start where the test's few requests fit in one. */
async function awaitRoomInThisMinute(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 50_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 50));
}

describe('GET /consultations/{id}/slots has a tighter limit of its own per client address', () => {
  test('past RATE_LIMIT_SLOTS_PER_MIN, counted across gateway replicas, the answer is 429 with Retry-After', async () => {
    await awaitRoomInThisMinute();
    const address = newAddress();
    expect((await slots(first, address)).status).toBe(200);
    expect((await slots(second, address)).status).toBe(200);
    expect((await slots(first, address, '/consultations/CON-2/slots')).status).toBe(200);

    const refused = await slots(second, address);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ success: false, errors: [{ code: 'rate_limited' }] });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect((await slots(first, address)).status).toBe(429);
  });

  test('other addresses and the other consultation routes are not affected', async () => {
    await awaitRoomInThisMinute();
    const address = newAddress();
    for (let i = 0; i < 3; i += 1) expect((await slots(first, address)).status).toBe(200);
    expect((await slots(first, address)).status).toBe(429);

    expect((await slots(first, newAddress())).status).toBe(200);
    for (const path of ['/consultations/CON-1', '/consultations?page=1', '/consultations/CON-1/slots/x']) {
      expect((await call(first.url, 'GET', path, { headers: { 'x-forwarded-for': address } })).status).toBe(200);
    }
  });

  test('0 turns the limit off', async () => {
    const unlimited = await startGateway({ CONSULTATION_URL: urlOf(consultation), RATE_LIMIT_SLOTS_PER_MIN: '0', TRUST_PROXY: '1' });
    try {
      const address = newAddress();
      for (let i = 0; i < 5; i += 1) expect((await slots(unlimited, address)).status).toBe(200);
    } finally {
      await unlimited.close();
    }
  });
});
