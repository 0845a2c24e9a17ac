// The catalog's process (its composition and app) loads its own area of the contracts
// (`@mkt/contracts/catalog`) and nothing else of them: neither the index, the document builders
// (OpenAPI, AsyncAPI, zod-openapi), the event-schema comparator nor another area's schemas.
import path from 'node:path';
import { contractsOutsideArea } from '@mkt/infra';

const zodOpenApi = require.resolve('zod-openapi', { paths: [path.join(__dirname, '../../../packages/contracts')] });
const refused = [...contractsOutsideArea('catalog'), zodOpenApi];

afterEach(() => {
  for (const file of refused) jest.dontMock(file);
  jest.resetModules();
});

test("the catalog's composition and app load no contracts module of another area", () => {
  for (const file of refused)
    jest.doMock(file, () => {
      throw new Error(`the catalog loaded ${path.relative(path.join(__dirname, '../../..'), file)}`);
    });
  /* eslint-disable @typescript-eslint/no-require-imports */
  expect(require('../src/composition')).toBeDefined();
  expect(typeof require('../src/app').createApp).toBe('function');
  /* eslint-enable @typescript-eslint/no-require-imports */
});
