import { SUBSCRIPTION_LIST, EVENT_TYPES, buildAsyncApi, buildOpenApi } from '@mkt/contracts';
import { getMetrics } from '@mkt/kit/metrics';
import { disconnectDatabase, startGateway, type Gateway } from './harness';
import { call, uniqueName } from './support';

let gateway: Gateway;
const password = 'correct horse battery';

beforeAll(async () => {
  gateway = await startGateway({
    RATE_LIMIT_IP_PER_MIN: '0',
    RATE_LIMIT_USER_PER_MIN: '0',
    PUBLIC_URL: 'https://api.marketplace.example/',
  });
});
afterAll(async () => {
  await gateway.close();
  await disconnectDatabase();
});

const register = (path: string, email: string) =>
  call(gateway.url, 'POST', path, { body: { email, password, fullName: 'Routes', role: 'buyer' } });

describe("the gateway's own routes match as written (case-sensitive, strict)", () => {
  test.each(['/v1/AUTH/login', '/v1/auth/LOGIN', '/v1/auth/login/', '/V1/auth/login'])(
    '%s does not reach the login handler, even with the right password',
    async (path) => {
      const email = `${uniqueName('case')}@example.com`;
      expect((await register('/v1/auth/register', email)).status).toBe(200);
      const res = await call(gateway.url, 'POST', path, { body: { email, password } });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ success: false, errors: [{ code: 'not_found' }] });
    },
  );

  test('/v1/auth/REGISTER registers nobody (it would pass beside the per-address registration limit)', async () => {
    const email = `${uniqueName('case')}@example.com`;
    expect((await register('/v1/auth/REGISTER', email)).status).toBe(404);
    expect((await register('/v1/auth/register', email)).status).toBe(200);
  });

  test('/DOCS is not the documentation', async () => {
    expect((await call(gateway.url, 'GET', '/docs')).status).toBe(200);
    expect((await call(gateway.url, 'GET', '/DOCS')).status).toBe(404);
  });
});

describe('the documents beside each other: /openapi.json and /asyncapi.json', () => {
  test('/openapi.json names the gateway’s PUBLIC_URL as its server (absolute, no trailing slash): what generated clients call', async () => {
    const res = await call(gateway.url, 'GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect((res.body as { servers: unknown }).servers).toEqual([{ url: 'https://api.marketplace.example' }]);
    expect(res.body).toEqual(JSON.parse(JSON.stringify(buildOpenApi('https://api.marketplace.example'))));
  });

  test('/asyncapi.json serves the AsyncAPI 3.0 document of the event bus, as the contracts build it', async () => {
    const res = await call(gateway.url, 'GET', '/asyncapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual(JSON.parse(JSON.stringify(buildAsyncApi())));
    const document = res.body as { asyncapi: string; channels: Record<string, { address: string }>; operations: Record<string, unknown> };
    expect(document.asyncapi).toBe('3.0.0');
    expect(Object.values(document.channels).map((channel) => channel.address)).toEqual(
      expect.arrayContaining([...EVENT_TYPES, ...SUBSCRIPTION_LIST.map((subscription) => subscription.queue)]),
    );
  });

  test('it is answered as /openapi.json is: the same headers (request id, security headers, no caching of its own)', async () => {
    const [events, api] = await Promise.all([call(gateway.url, 'GET', '/asyncapi.json'), call(gateway.url, 'GET', '/openapi.json')]);
    expect(api.status).toBe(200);
    const names = (headers: Headers) => [...headers.keys()].filter((name) => !['content-length', 'date', 'etag'].includes(name)).sort();
    expect(names(events.headers)).toEqual(names(api.headers));
    expect(events.headers.get('x-request-id')).toBeTruthy();
    expect(events.headers.get('cache-control')).toBe(api.headers.get('cache-control'));
  });

  test('matched as written, like every own route: /ASYNCAPI.json is 404, a POST is 405 with Allow', async () => {
    expect((await call(gateway.url, 'GET', '/ASYNCAPI.json')).status).toBe(404);
    expect((await call(gateway.url, 'GET', '/asyncapi.json/')).status).toBe(404);
    const post = await call(gateway.url, 'POST', '/asyncapi.json', { body: {} });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toContain('GET');
  });
});

describe('HTTP metrics', () => {
  test('the 200 and the 409 of register share one route label, the full path', async () => {
    const email = `${uniqueName('metrics')}@example.com`;
    expect((await register('/v1/auth/register', email)).status).toBe(200);
    expect((await register('/v1/auth/register', email)).status).toBe(409);
    const { values } = await getMetrics().httpDuration.get();
    const routesOf = (status: string) =>
      values
        .filter(
          (v) =>
            v.metricName === 'marketplace_http_request_duration_seconds_count' && v.labels.method === 'POST' && v.labels.status === status,
        )
        .map((v) => v.labels.route);
    expect(routesOf('200')).toContain('/v1/auth/register');
    expect(routesOf('409')).toEqual(['/v1/auth/register']);
  });
});
