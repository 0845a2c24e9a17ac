import { COUNTRY_CODES, CreateShopBody, isCountryCode } from '@mkt/contracts';

describe('ISO 3166-1 alpha-2 country codes', () => {
  test('the 249 assigned codes and XK', () => {
    expect(COUNTRY_CODES.size).toBe(250);
    for (const code of COUNTRY_CODES) expect(code).toMatch(/^[A-Z]{2}$/);
  });
  test.each(['ET', 'KE', 'US', 'GB', 'DE', 'AX', 'SS', 'XK'])('%s is a country', (code) => {
    expect(isCountryCode(code)).toBe(true);
  });
  test.each(['XX', 'ZZ', 'UK', 'EU', 'et', 'ETH', 'E', '', '231'])('%j is not', (code) => {
    expect(isCountryCode(code)).toBe(false);
  });
  test('a shop body names the country field when the code is unknown', () => {
    const result = CreateShopBody.safeParse({ name: 'Shop', slug: 'shop', country: 'XX', category: 'Books' });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['country']);
  });
});
