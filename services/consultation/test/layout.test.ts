import path from 'node:path';
import { serviceLayout } from '@mkt/infra';

test("the service keeps the one layout (docs/architecture.md, A service's files): every file where its role says", () => {
  expect(serviceLayout(path.join(__dirname, '../src'))).toEqual([]);
});
