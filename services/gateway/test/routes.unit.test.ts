import { ENDPOINTS } from '@mkt/contracts';
import { prefixOf, ROUTES, routesOf, upstreamFor } from '../src/proxy/routes';

describe('the proxy routes come from the endpoint table', () => {
  test('every service’s prefixes, the gateway’s own not proxied', () => {
    expect([...ROUTES].sort((a, b) => a.prefix.localeCompare(b.prefix))).toEqual([
      { prefix: '/consultations', upstream: 'consultation' },
      { prefix: '/customers', upstream: 'crm' },
      { prefix: '/physical-products', upstream: 'catalog' },
      { prefix: '/reviews', upstream: 'review' },
      { prefix: '/v1/products', upstream: 'catalog' },
      { prefix: '/v1/shops', upstream: 'catalog' },
      { prefix: '/v1/wallet', upstream: 'wallet' },
      { prefix: '/wallets', upstream: 'wallet' },
    ]);
  });

  test('every entry of a service is routed to it', () => {
    for (const { path, service } of ENDPOINTS) {
      const concrete = path.replace(/\{\w+\}/g, 'x');
      expect({ path, upstream: upstreamFor(concrete) }).toEqual({ path, upstream: service === 'gateway' ? null : service });
    }
  });

  test.each([
    ['/wallets/users/{userReferenceId}/topup', '/wallets'],
    ['/v1/wallet', '/v1/wallet'],
    ['/v1/wallet/transfers', '/v1/wallet'],
    ['/physical-products/seller-products/', '/physical-products'],
  ])('the prefix of %s is %s', (path, prefix) => {
    expect(prefixOf(path)).toBe(prefix);
  });

  test('a prefix of two services, or a path without a fixed first segment, is refused', () => {
    expect(() =>
      routesOf([
        { path: '/a/x', service: 'wallet' },
        { path: '/a/y', service: 'crm' },
      ]),
    ).toThrow('both wallet');
    expect(() => prefixOf('/{id}/x')).toThrow('No routing prefix');
    expect(() => prefixOf('/v1')).toThrow('No routing prefix');
  });

  test('a prefix ends at a segment boundary, in its own spelling', () => {
    expect(upstreamFor('/walletsx')).toBeNull();
    expect(upstreamFor('/WALLETS/banks')).toBeNull();
    expect(upstreamFor('/v1/auth/login')).toBeNull();
    expect(upstreamFor('/reviews')).toBe('review');
  });
});
