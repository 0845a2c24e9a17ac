// A service that verifies tokens with one public key (JWT_PUBLIC_KEY) never loads jwks-rsa (and
// jose under it): they are loaded when a JWKS is configured, not with kit's http module.
import pino from 'pino';
import type * as AccessKeysModule from '../src/http/access-keys';

const config = { JWT_JWKS_CACHE_SECONDS: 600, JWT_JWKS_REQUESTS_PER_MINUTE: 10, JWT_JWKS_STALE_SECONDS: 3600 };

afterEach(() => {
  jest.dontMock('jwks-rsa');
  jest.resetModules();
});

test("kit's http module and a public key's access keys load without jwks-rsa", async () => {
  jest.doMock('jwks-rsa', () => {
    throw new Error('jwks-rsa loaded without a JWKS');
  });
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  expect(typeof require('@mkt/kit/http').createService).toBe('function');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { accessKeysFrom } = require('../src/http/access-keys') as typeof AccessKeysModule;
  const keys = accessKeysFrom({ ...config, JWT_PUBLIC_KEY: 'the-pem' }, pino({ level: 'silent' }));
  await expect(keys.keyFor('any')).resolves.toBe('the-pem');
});

test('a JWKS loads it when the keys are made', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { accessKeysFrom } = require('../src/http/access-keys') as typeof AccessKeysModule;
  const keys = accessKeysFrom({ ...config, JWT_JWKS_URL: 'http://127.0.0.1:9/.well-known/jwks.json' }, pino({ level: 'silent' }));
  expect(keys.loaded?.()).toBe(false);
});
