// The gateway's process (its composition and app) loads neither the contracts' index nor what only
// its documents need (the OpenAPI and AsyncAPI builders, zod-openapi, the event-schema comparator):
// they are loaded on the first request for a document (http/docs.ts). Its proxy routes every
// area's operations, so it loads their schemas (`@mkt/contracts/endpoints`).
import path from 'node:path';
import { contractsOutsideArea } from '@mkt/infra';

const zodOpenApi = require.resolve('zod-openapi', { paths: [path.join(__dirname, '../../../packages/contracts')] });
const refused = [...contractsOutsideArea('gateway'), zodOpenApi];

afterEach(() => {
  for (const file of refused) jest.dontMock(file);
  jest.resetModules();
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
