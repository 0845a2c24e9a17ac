// The gateway's process (its composition and app) loads neither the contracts' index nor what only
// its documents need (the OpenAPI and AsyncAPI builders, zod-openapi, the event-schema comparator):
// they are loaded on the first request for a document (http/docs.ts). Nor the whole endpoint table
// (`api`, `@mkt/contracts/endpoints`) or any other area's schemas: its proxy routes from the
// schema-free route list (`@mkt/contracts/routes`).
import path from 'node:path';
import { contractsOutsideArea } from '@mkt/infra';

const contractsSrc = path.join(__dirname, '../../../packages/contracts/src');
const zodOpenApi = require.resolve('zod-openapi', { paths: [path.join(__dirname, '../../../packages/contracts')] });
const refused = [...contractsOutsideArea('gateway'), zodOpenApi];

afterEach(() => {
  for (const file of refused) jest.dontMock(file);
  jest.resetModules();
});

test('the refused modules include the whole table and every other area’s', () => {
  const names = refused.map((file) => path.relative(contractsSrc, file));
  expect(names).toEqual(
    expect.arrayContaining(['index.ts', 'api.ts', 'entries/endpoints.ts', 'tables/wallet.table.ts', 'tables/review.table.ts', 'wallet.ts']),
  );
  expect(names).not.toContain('tables/auth.table.ts');
});

test("the gateway's composition and app load no contracts module outside its entries", () => {
  for (const file of refused)
    jest.doMock(file, () => {
      throw new Error(`the gateway loaded ${path.relative(path.join(__dirname, '../../..'), file)}`);
    });
  /* eslint-disable @typescript-eslint/no-require-imports */
  expect(require('../src/composition')).toBeDefined();
  expect(typeof require('../src/app').createApp).toBe('function');
  /* eslint-enable @typescript-eslint/no-require-imports */
});
