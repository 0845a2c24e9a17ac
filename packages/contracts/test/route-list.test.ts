// `@mkt/contracts/routes` is generated from the endpoint table (`node scripts/contracts.mjs routes`)
// and builds no schema: the gateway's proxy routes from it without loading every area's.
import { ENDPOINTS } from '@mkt/contracts';
import type * as Routes from '../src/entries/routes';

afterEach(() => {
  jest.dontMock('zod');
  jest.resetModules();
});

test('the route list is the table’s method, path and service of every entry, in its order', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { ROUTE_LIST } = require('../src/entries/routes') as typeof Routes;
  const hint = 'regenerate: npm run contracts:routes';
  expect({ hint, routes: ROUTE_LIST }).toEqual({ hint, routes: ENDPOINTS.map(({ method, path, service }) => ({ method, path, service })) });
});

test('@mkt/contracts/routes loads without zod', () => {
  jest.doMock('zod', () => {
    throw new Error('the route list loaded zod');
  });
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { ROUTE_LIST } = require('../src/entries/routes') as typeof Routes;
  expect(ROUTE_LIST.length).toBe(ENDPOINTS.length);
});
