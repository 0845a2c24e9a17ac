// `@mkt/contracts/bus-access` and `@mkt/contracts/references` build no schema: what provisions the
// broker (packages/infra, `npm start`'s runner) loads them without zod; they answer what the index does.
import * as index from '@mkt/contracts';
import type * as BusAccess from '../src/entries/bus-access';

const refuse = () => {
  throw new Error('a schema-free entry loaded zod');
};

afterEach(() => {
  jest.dontMock('zod');
  jest.resetModules();
});

test.each(['bus-access', 'references'])('@mkt/contracts/%s loads without zod, and each of its values is the index’s', (entry) => {
  jest.doMock('zod', refuse);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const loaded = require(`../src/entries/${entry}`) as Record<string, unknown>;
  const names = Object.keys(loaded);
  expect(names.length).toBeGreaterThan(3);
  for (const name of names) {
    const value = loaded[name];
    const same = index[name as keyof typeof index] as unknown;
    if (typeof value === 'function') expect(typeof same).toBe('function');
    else expect(JSON.parse(JSON.stringify(value ?? null))).toEqual(JSON.parse(JSON.stringify(same ?? null)));
  }
});

test('the broker entry answers the permissions the index does', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const bus = require('../src/entries/bus-access') as typeof BusAccess;
  for (const service of index.BUS_SERVICES) expect(bus.busPermissions(service, 'ns')).toEqual(index.busPermissions(service, 'ns'));
  expect(bus.routingKeyOf('wallet.topup.completed', 2)).toBe(index.routingKeyOf('wallet.topup.completed', 2));
  expect(bus.SUBSCRIPTION_LIST).toEqual(index.SUBSCRIPTION_LIST);
});
