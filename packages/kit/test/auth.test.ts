import jwt from 'jsonwebtoken';
import { verifyAccessToken } from '@mkt/kit/http';
import { makeKeyPair, signTestToken } from '@mkt/infra';

const keys = makeKeyPair();
const other = makeKeyPair();
const user = { id: '5b1f3f43-0000-4000-8000-000000000001', ref: 'MKT-USR-AB12CD34', role: 'buyer' as const };
const claims = { ref: user.ref, role: user.role, email: 'b@example.test', name: 'B' };
const standard = { subject: user.id, issuer: 'marketplace-gateway', audience: 'marketplace', expiresIn: 900 };

describe('verifyAccessToken (the public key parsed once and reused)', () => {
  test('a token the gateway signed is accepted, every time', async () => {
    const token = signTestToken(keys.privateKey, user);
    for (let i = 0; i < 3; i += 1)
      await expect(verifyAccessToken(token, keys.publicKey)).resolves.toMatchObject({ id: user.id, role: 'buyer' });
  });

  test('keys are not mixed up: a token of another key pair is refused under this one', async () => {
    await verifyAccessToken(signTestToken(other.privateKey, user), other.publicKey);
    await expect(verifyAccessToken(signTestToken(other.privateKey, user), keys.publicKey)).rejects.toThrow('not valid');
  });

  test('HS256 signed with the public key as its secret, and alg none, are refused', async () => {
    const hs = jwt.sign(claims, keys.publicKey, { algorithm: 'HS256', ...standard });
    await expect(verifyAccessToken(hs, keys.publicKey)).rejects.toThrow('not valid');
    const none = jwt.sign(claims, '', { algorithm: 'none', ...standard });
    await expect(verifyAccessToken(none, keys.publicKey)).rejects.toThrow('not valid');
  });

  test('an expired token says so', async () => {
    const token = signTestToken(keys.privateKey, user, { expiresIn: -10 });
    await expect(verifyAccessToken(token, keys.publicKey)).rejects.toThrow('expired');
  });

  test('a token verified before (kept until it expires) is refused once it has expired, and under another key', async () => {
    jest.useFakeTimers({ now: Date.now(), doNotFake: ['nextTick', 'queueMicrotask'] });
    try {
      const token = signTestToken(keys.privateKey, user, { expiresIn: 60 });
      await expect(verifyAccessToken(token, keys.publicKey)).resolves.toMatchObject({ id: user.id });
      await expect(verifyAccessToken(token, other.publicKey)).rejects.toThrow('not valid');
      jest.setSystemTime(Date.now() + 59_000);
      await expect(verifyAccessToken(token, keys.publicKey)).resolves.toMatchObject({ id: user.id });
      jest.setSystemTime(Date.now() + 2_000);
      await expect(verifyAccessToken(token, keys.publicKey)).rejects.toThrow('expired');
    } finally {
      jest.useRealTimers();
    }
  });
});
