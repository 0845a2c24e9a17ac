// What `npm start`'s runner loads to provide the servers and run the services: packages/infra's
// index (provideInfra, the broker users' permissions, the dev runner) holds no schema — neither
// zod nor the contracts' index, which every process of the run would otherwise carry (≈ 30 MB),
// nor jsonwebtoken (the tests' token signing).
import path from 'node:path';
import type * as Contracts from '@mkt/contracts';
import type * as BusUsersModule from '../src/bus-users';
import type * as InfraIndex from '../src/index';

const contracts = path.join(__dirname, '../../contracts');
const refuse = (what: string) => () => {
  throw new Error(`packages/infra loaded ${what}`);
};

const zod = require.resolve('zod', { paths: [contracts] });
afterEach(() => {
  jest.dontMock(zod);
  jest.dontMock('@mkt/contracts');
  jest.dontMock('jsonwebtoken');
  jest.resetModules();
});

test("packages/infra's index loads neither zod, the contracts' index nor jsonwebtoken", () => {
  jest.doMock(zod, refuse('zod'));
  jest.doMock('@mkt/contracts', refuse("the contracts' index"));
  jest.doMock('jsonwebtoken', refuse('jsonwebtoken (only the tests that sign tokens need it)'));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const infra = require('../src/index') as typeof InfraIndex;
  expect(typeof infra.provideInfra).toBe('function');
  expect(typeof infra.runDevelopment).toBe('function');
  expect(typeof infra.newBusUsers).toBe('function');
});

test('the broker permissions it grants are those of the contracts', () => {
  const index = jest.requireActual('@mkt/contracts') as typeof Contracts;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { busDefinitions, newBusUsers } = require('../src/bus-users') as typeof BusUsersModule;
  const users = newBusUsers('amqp://127.0.0.1:5672', 'mkt_test_{service}').users;
  const definitions = busDefinitions(users, 'ns');
  for (const [i, { service }] of users.entries()) {
    const { configure, write, read, topic } = index.busPermissions(service, 'ns');
    expect(definitions.permissions[i]).toMatchObject({ configure, write, read });
    expect(definitions.topic_permissions[i]).toMatchObject(topic);
  }
  expect(users.map(({ service }) => service)).toEqual([...index.BUS_SERVICES]);
});
