import jwt from 'jsonwebtoken';
import { verifyAccessToken } from '@mkt/kit';
import { makeKeyPair, signTestToken } from '@mkt/infra';

const keys = makeKeyPair();
const other = makeKeyPair();
const user = { id: '5b1f3f43-0000-4000-8000-000000000001', ref: 'MKT-USR-AB12CD34', role: 'buyer' as const };
const claims = { ref: user.ref, role: user.role, email: 'b@example.test', name: 'B' };
const standard = { subject: user.id, issuer: 'marketplace-gateway', audience: 'marketplace', expiresIn: 900 };

describe('verifyAccessToken (the public key parsed once and reused)', () => {
  test('a token the gateway signed is accepted, every time', () => {
    const token = signTestToken(keys.privateKey, user);
    for (let i = 0; i < 3; i += 1) expect(verifyAccessToken(token, keys.publicKey)).toMatchObject({ id: user.id, role: 'buyer' });
  });

  test('keys are not mixed up: a token of another key pair is refused under this one', () => {
    verifyAccessToken(signTestToken(other.privateKey, user), other.publicKey);
    expect(() => verifyAccessToken(signTestToken(other.privateKey, user), keys.publicKey)).toThrow('not valid');
  });

  test('HS256 signed with the public key as its secret, and alg none, are refused', () => {
    const hs = jwt.sign(claims, keys.publicKey, { algorithm: 'HS256', ...standard });
    expect(() => verifyAccessToken(hs, keys.publicKey)).toThrow('not valid');
    const none = jwt.sign(claims, '', { algorithm: 'none', ...standard });
    expect(() => verifyAccessToken(none, keys.publicKey)).toThrow('not valid');
  });

  test('an expired token says so', () => {
    const token = signTestToken(keys.privateKey, user, { expiresIn: -10 });
    expect(() => verifyAccessToken(token, keys.publicKey)).toThrow('expired');
  });

  test('a token verified before (kept until it expires) is refused once it has expired, and under another key', () => {
    jest.useFakeTimers({ now: Date.now() });
    try {
      const token = signTestToken(keys.privateKey, user, { expiresIn: 60 });
      expect(verifyAccessToken(token, keys.publicKey)).toMatchObject({ id: user.id });
      expect(() => verifyAccessToken(token, other.publicKey)).toThrow('not valid');
      jest.setSystemTime(Date.now() + 59_000);
      expect(verifyAccessToken(token, keys.publicKey)).toMatchObject({ id: user.id });
      jest.setSystemTime(Date.now() + 2_000);
      expect(() => verifyAccessToken(token, keys.publicKey)).toThrow('expired');
    } finally {
      jest.useRealTimers();
    }
  });
});
