// The gateway holds neither Swagger UI's browser bundle nor the built documents until /docs,
// /openapi.json or /asyncapi.json is asked for: a gateway nobody reads the documents of keeps
// their memory.
jest.mock('swagger-ui-dist', () => {
  throw new Error("swagger-ui-dist's index loads the whole browser bundle: the gateway only serves its files");
});
jest.mock('@mkt/contracts', () => {
  const actual = jest.requireActual('@mkt/contracts');
  return { ...actual, buildOpenApi: jest.fn(actual.buildOpenApi), buildAsyncApi: jest.fn(actual.buildAsyncApi) };
});

import { buildAsyncApi, buildOpenApi } from '@mkt/contracts';
import { disconnectDatabase, startGateway, type Gateway } from './harness';
import { call } from './support';

let gateway: Gateway;

beforeAll(async () => {
  gateway = await startGateway({ PUBLIC_URL: 'https://api.marketplace.example/' });
});
afterAll(async () => {
  await gateway.close();
  await disconnectDatabase();
});

test('the documents are built on their first request, once, and answered the same after', async () => {
  expect(buildOpenApi).not.toHaveBeenCalled();
  expect(buildAsyncApi).not.toHaveBeenCalled();
  const first = await call(gateway.url, 'GET', '/openapi.json');
  const second = await call(gateway.url, 'GET', '/openapi.json');
  expect([first.status, second.status]).toEqual([200, 200]);
  expect(first.headers.get('content-type')).toMatch(/^application\/json/);
  expect(second.body).toEqual(first.body);
  expect(buildOpenApi).toHaveBeenCalledTimes(1);
  expect(buildAsyncApi).not.toHaveBeenCalled();
  const events = await call(gateway.url, 'GET', '/asyncapi.json');
  expect(events.status).toBe(200);
  expect(buildAsyncApi).toHaveBeenCalledTimes(1);
});

test("Swagger UI's files are served without its package's index (its browser bundle) loaded", async () => {
  const css = await call(gateway.url, 'GET', '/docs/assets/swagger-ui.css');
  expect(css.status).toBe(200);
  expect(css.headers.get('content-type')).toMatch(/^text\/css/);
  expect((await call(gateway.url, 'GET', '/docs')).status).toBe(200);
});
