import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { generateKeyPairSync } from 'node:crypto';
import { makeKeyPair } from '@mkt/infra';
import { readKeyDirectory, singleKeySet, SigningKeySet } from '../../src/credentials/key-set';

const pairs = { a: makeKeyPair(), b: makeKeyPair() };
const dirs: string[] = [];
function keyDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'key-set-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

describe('the signing key set', () => {
  test('a directory: every <kid>.pem is published, `current` names the one that signs', () => {
    const set = readKeyDirectory(
      keyDir({ 'a.pem': pairs.a.privateKey, 'b.pem': pairs.b.privateKey, current: 'b\n', 'README.txt': 'ignored' }),
    );
    expect(set.current.kid).toBe('b');
    expect([...set.keys.keys()].sort()).toEqual(['a', 'b']);
    const jwks = new SigningKeySet(set, pino({ level: 'silent' })).jwks();
    expect(jwks.keys.map((key) => key.kid).sort()).toEqual(['a', 'b']);
    expect(jwks.keys.every((key) => key.alg === 'RS256' && key.use === 'sig' && !('d' in key))).toBe(true);
  });

  test.each([
    ['no current file', { 'a.pem': pairs.a.privateKey }, /current/],
    ['current naming no key', { 'a.pem': pairs.a.privateKey, current: 'z' }, /names "z"/],
    ['a file that is not a key', { 'a.pem': pairs.a.privateKey, 'b.pem': 'not a key', current: 'a' }, /b: not a PEM private key/],
    ['a kid with other characters', { 'a b.pem': pairs.a.privateKey, current: 'a b' }, /letters, digits/],
  ])('%s: the set is refused', (_case, files, message) => {
    expect(() => readKeyDirectory(keyDir(files as Record<string, string>))).toThrow(message);
  });

  test('an RSA key under 2048 bits, or not RSA, is refused', () => {
    const small = generateKeyPairSync('rsa', {
      modulusLength: 1024,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    expect(() => singleKeySet(small.privateKey, 'small')).toThrow('2048');
    const ec = generateKeyPairSync('ec', {
      namedCurve: 'P-256',
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    expect(() => singleKeySet(ec.privateKey, 'ec')).toThrow('RSA');
  });

  test('verification takes a key of the set by kid; without a kid only while the set has one key', async () => {
    const log = pino({ level: 'silent' });
    const one = new SigningKeySet(singleKeySet(pairs.a.privateKey, 'a'), log);
    await expect(one.keyFor(undefined)).resolves.toContain('PUBLIC KEY');
    await expect(one.keyFor('b')).rejects.toThrow('not valid');
    const two = new SigningKeySet(
      readKeyDirectory(keyDir({ 'a.pem': pairs.a.privateKey, 'b.pem': pairs.b.privateKey, current: 'a' })),
      log,
    );
    await expect(two.keyFor('b')).resolves.toContain('PUBLIC KEY');
    await expect(two.keyFor(undefined)).rejects.toThrow('not valid');
  });

  test('refresh takes a changed directory and keeps the last good set when it does not read', () => {
    const dir = keyDir({ 'a.pem': pairs.a.privateKey, current: 'a' });
    const set = new SigningKeySet(readKeyDirectory(dir), pino({ level: 'silent' }), { read: () => readKeyDirectory(dir), everyMs: 1000 });
    expect(set.refresh()).toBe(false);
    writeFileSync(join(dir, 'b.pem'), pairs.b.privateKey);
    writeFileSync(join(dir, 'current'), 'b');
    expect(set.refresh()).toBe(true);
    expect(set.current().kid).toBe('b');
    writeFileSync(join(dir, 'current'), 'c');
    expect(() => set.refresh()).toThrow('names "c"');
    expect(set.current().kid).toBe('b');
  });
});
