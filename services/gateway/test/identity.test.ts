import jwt from 'jsonwebtoken';
import { createHmac, createPublicKey } from 'node:crypto';
import { disconnectDatabase, env, startGateway, type Gateway } from './harness';
import { call, listenForEvents, makeKeyPair, signTestToken, testServers, uniqueName } from './support';

let gateway: Gateway;
const password = 'correct horse battery';

beforeAll(async () => {
  gateway = await startGateway({ RATE_LIMIT_IP_PER_MIN: '0', RATE_LIMIT_USER_PER_MIN: '0' });
});
afterAll(async () => {
  await gateway.close();
  await disconnectDatabase();
});

const email = () => `${uniqueName('user')}@Example.com`;
const register = (body: object) => call(gateway.url, 'POST', '/v1/auth/register', { body });

describe('identity', () => {
  test('register, then login, then me', async () => {
    const address = email();
    const registered = await register({ email: address, password, fullName: 'Abebe Kebede', role: 'seller' });
    expect(registered.status).toBe(200);
    expect(registered.body).toMatchObject({
      success: true,
      data: { user: { email: address.toLowerCase(), fullName: 'Abebe Kebede', role: 'seller' }, tokenType: 'Bearer', expiresIn: 900 },
    });
    expect(registered.body.data.user.referenceId).toMatch(/^MKT-USR-[A-Z0-9]{8}$/);
    expect(JSON.stringify(registered.body)).not.toContain('passwordHash');

    const login = await call(gateway.url, 'POST', '/v1/auth/login', { body: { email: address.toUpperCase(), password } });
    expect(login.status).toBe(200);
    const me = await call(gateway.url, 'GET', '/v1/auth/me', { token: login.body.data.accessToken });
    expect(me.status).toBe(200);
    expect(me.body.data).toEqual(registered.body.data.user);
  });

  test('registration publishes identity.user.registered through the outbox', async () => {
    const events = await listenForEvents(testServers().amqpUrl, env.events, ['identity.user.registered']);
    const address = email();
    const registered = await register({ email: address, password, fullName: 'Sara T', role: 'buyer' });
    const event = (await events.waitFor((e) => e.json.data.email === address.toLowerCase(), `the registration of ${address}`)).json;
    await events.close();
    expect(event).toMatchObject({
      type: 'identity.user.registered',
      version: 1,
      source: 'gateway',
      data: { userId: registered.body.data.user.id, referenceId: registered.body.data.user.referenceId, role: 'buyer', fullName: 'Sara T' },
    });
  });

  test('a taken email is 409, whatever its case', async () => {
    const address = email();
    expect((await register({ email: address, password, fullName: 'A', role: 'buyer' })).status).toBe(200);
    const second = await register({ email: address.toUpperCase(), password, fullName: 'B', role: 'buyer' });
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ success: false, errors: [{ code: 'conflict' }] });
  });

  test('bad registrations are 400 with one item per field; admin cannot be chosen', async () => {
    const res = await register({ email: 'not-an-email', password: 'short', fullName: '', role: 'admin', extra: 1 });
    expect(res.status).toBe(400);
    const paths = res.body.errors.map((e: { path: string }) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['email', 'password', 'fullName', 'role', 'extra']));
  });

  test('a wrong password and an unknown email get the same 401', async () => {
    const address = email();
    await register({ email: address, password, fullName: 'A', role: 'buyer' });
    const wrongPassword = await call(gateway.url, 'POST', '/v1/auth/login', { body: { email: address, password: 'wrong password!' } });
    const unknownEmail = await call(gateway.url, 'POST', '/v1/auth/login', { body: { email: email(), password } });
    expect(wrongPassword.status).toBe(401);
    expect(unknownEmail.status).toBe(401);
    expect(wrongPassword.body).toEqual(unknownEmail.body);
  });

  test('refresh rotates: the new token works, the old one is refused, and its reuse ends the session', async () => {
    const session = (await register({ email: email(), password, fullName: 'A', role: 'buyer' })).body.data;
    const first = await call(gateway.url, 'POST', '/v1/auth/refresh', { body: { refreshToken: session.refreshToken } });
    expect(first.status).toBe(200);
    expect(first.body.data.refreshToken).not.toBe(session.refreshToken);
    const reused = await call(gateway.url, 'POST', '/v1/auth/refresh', { body: { refreshToken: session.refreshToken } });
    expect(reused.status).toBe(401);
    const afterTheft = await call(gateway.url, 'POST', '/v1/auth/refresh', { body: { refreshToken: first.body.data.refreshToken } });
    expect(afterTheft.status).toBe(401);
  });

  test('logout revokes the refresh token', async () => {
    const session = (await register({ email: email(), password, fullName: 'A', role: 'buyer' })).body.data;
    expect((await call(gateway.url, 'POST', '/v1/auth/logout', { body: { refreshToken: session.refreshToken } })).status).toBe(200);
    expect((await call(gateway.url, 'POST', '/v1/auth/refresh', { body: { refreshToken: session.refreshToken } })).status).toBe(401);
  });

  test('the admin is seeded once and logs in as admin', async () => {
    const address = email().toLowerCase();
    await gateway.identity.seedAdmin(address, password, 'Admin');
    await gateway.identity.seedAdmin(address, password, 'Admin');
    const login = await call(gateway.url, 'POST', '/v1/auth/login', { body: { email: address, password } });
    expect(login.body.data.user.role).toBe('admin');
  });

  test('the JWKS verifies the access tokens', async () => {
    const session = (await register({ email: email(), password, fullName: 'A', role: 'buyer' })).body.data;
    const set = await call(gateway.url, 'GET', '/v1/auth/.well-known/jwks.json');
    expect(set.status).toBe(200);
    const key = createPublicKey({ key: set.body.keys[0], format: 'jwk' });
    const claims = jwt.verify(session.accessToken, key, { algorithms: ['RS256'] }) as jwt.JwtPayload;
    expect(claims).toMatchObject({ sub: session.user.id, ref: session.user.referenceId, role: 'buyer', name: 'A' });
  });
});

describe('tokens that are refused with 401', () => {
  const user = { id: '00000000-0000-4000-8000-000000000001', ref: 'MKT-USR-AAAAAAAA', role: 'admin' as const };
  const me = (token: string) => call(gateway.url, 'GET', '/v1/auth/me', { token });

  test('no token', async () => {
    expect((await call(gateway.url, 'GET', '/v1/auth/me')).status).toBe(401);
  });
  test('a tampered token', async () => {
    const token = signTestToken(gateway.keys.privateKey, { ...user, role: 'buyer' });
    const [header, payload, signature] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), role: 'admin' })).toString(
      'base64url',
    );
    const res = await me(`${header}.${forged}.${signature}`);
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ success: false, errors: [{ code: 'unauthenticated' }] });
  });
  test('an expired token', async () => {
    const token = signTestToken(gateway.keys.privateKey, user, { expiresIn: -10 });
    const res = await me(token);
    expect(res.status).toBe(401);
    expect(res.body.message).toMatch(/expired/);
  });
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const adminClaims = () => ({
    sub: user.id,
    ref: user.ref,
    role: 'admin',
    email: 'x@y.z',
    name: 'X',
    iss: 'marketplace-gateway',
    aud: 'marketplace',
    exp: Math.floor(Date.now() / 1000) + 600,
  });

  test('alg none', async () => {
    expect((await me(`${encode({ alg: 'none', typ: 'JWT' })}.${encode(adminClaims())}.`)).status).toBe(401);
  });
  test('HS256 signed with the public key', async () => {
    const header = encode({ alg: 'HS256', typ: 'JWT' });
    const body = encode(adminClaims());
    const signature = createHmac('sha256', gateway.keys.publicKey).update(`${header}.${body}`).digest('base64url');
    expect((await me(`${header}.${body}.${signature}`)).status).toBe(401);
  });
  test('a token from another key pair', async () => {
    expect((await me(signTestToken(makeKeyPair().privateKey, user))).status).toBe(401);
  });
});
