import type { Express } from 'express';
import pino from 'pino';
import {
  CreateDiscountBody,
  ENDPOINTS,
  // The document with its named schemas inlined: these checks read schemas without resolving $ref.
  buildInlinedOpenApi as buildOpenApi,
  errorAnswers,
  type Endpoint,
  type Service,
} from '@mkt/contracts';
import { mountedEndpoints } from '@mkt/kit/http';
import { makeKeyPair } from '@mkt/infra';
import { catalogService } from '../../services/catalog/src/composition';
import { loadConfig as catalogConfig } from '../../services/catalog/src/config';
import { consultationService } from '../../services/consultation/src/composition';
import { loadConfig as consultationConfig } from '../../services/consultation/src/config';
import { crmService } from '../../services/crm/src/composition';
import { loadConfig as crmConfig } from '../../services/crm/src/config';
import { gatewayService } from '../../services/gateway/src/composition';
import { loadConfig as gatewayConfig } from '../../services/gateway/src/config';
import { reviewService } from '../../services/review/src/composition';
import { loadConfig as reviewConfig } from '../../services/review/src/config';
import { walletService } from '../../services/wallet/src/composition';
import { loadConfig as walletConfig } from '../../services/wallet/src/config';

// Building the apps touches no server: each composition makes its parts, nothing connects, and
// what the apps mounted is only read.
const log = pino({ level: 'silent' });
const keys = makeKeyPair();
const env = { MONGO_URL: 'mongodb://unused', AMQP_URL: 'amqp://unused', JWT_PUBLIC_KEY: keys.publicKey, JWT_PRIVATE_KEY: keys.privateKey };
const INFRASTRUCTURE = ['/healthz', '/readyz', '/metrics', '/openapi.json', '/asyncapi.json', '/docs', '/docs/init.js'];

function apps(): Record<Service, Express> {
  return {
    gateway: gatewayService(gatewayConfig(env), log).parts.service,
    wallet: walletService(walletConfig(env), log).definition.app as Express,
    catalog: catalogService(catalogConfig(env), log).definition.app as Express,
    crm: crmService(crmConfig(env), log).definition.app as Express,
    consultation: consultationService(consultationConfig(env), log).definition.app as Express,
    review: reviewService(reviewConfig(env), log).definition.app as Express,
  };
}

// The table's `{name}` parameters, and no trailing slash: the same spelling on both sides.
const normalize = (path: string) => path.replace(/\/+$/, '') || '/';

describe('the OpenAPI document', () => {
  const built = apps();
  const served = Object.entries(built).flatMap(([service, app]) =>
    [
      // The entries the app mounted from the tables (each checked against its handler at mount).
      ...mountedEndpoints(app).map((entry) => `${entry.method} ${normalize(entry.path)}`),
    ]
      // `/internal/*` is service to service (a shared credential), never routed by the gateway.
      .filter((route) => !INFRASTRUCTURE.includes(route.split(' ')[1]!) && !route.split(' ')[1]!.startsWith('/internal/'))
      .map((route) => `${service} ${route}`),
  );
  const documented = ENDPOINTS.map((endpoint) => `${endpoint.service} ${endpoint.method} ${normalize(endpoint.path)}`);

  test('documents every endpoint a service serves, and nothing it does not', () => {
    expect(served.length).toBeGreaterThan(60);
    expect([...new Set(served)].sort()).toEqual([...new Set(documented)].sort());
  });

  test('is OpenAPI 3.1 with a bearer scheme, the error envelope, and request schemas from the contracts', () => {
    const document = buildOpenApi();
    expect(document.openapi).toBe('3.1.0');
    expect(document.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(document.components.schemas.ErrorBody.example.success).toBe(false);
    const topUp = document.paths['/wallets/users/{userReferenceId}/topup']!.post as {
      requestBody: { content: Record<string, { schema: { properties: Record<string, unknown> } }> };
    };
    expect(Object.keys(topUp.requestBody.content['application/json']!.schema.properties)).toEqual([
      'amount',
      'paymentMethod',
      'redirectUrl',
      'notes',
    ]);
    expect(Object.keys(document.paths).length).toBeGreaterThan(60);
  });

  test('a body is required exactly where an empty one would be refused (a missing body reads as {})', () => {
    const document = buildOpenApi();
    for (const endpoint of ENDPOINTS.filter((candidate) => candidate.body)) {
      const { requestBody } = document.paths[endpoint.path]![endpoint.method] as { requestBody: { required: boolean } };
      expect({ endpoint: key(endpoint), required: requestBody.required }).toEqual({
        endpoint: key(endpoint),
        required: !endpoint.body!.safeParse({}).success,
      });
    }
    const approve = document.paths['/wallets/payout-requests/{referenceId}/approve']!.post as { requestBody: { required: boolean } };
    expect(approve.requestBody.required).toBe(false);
    const topUp = document.paths['/wallets/users/{userReferenceId}/topup']!.post as { requestBody: { required: boolean } };
    expect(topUp.requestBody.required).toBe(true);
  });
});

type Operation = {
  requestBody?: { content: Record<string, { example?: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: Record<string, unknown>; example?: unknown }> }>;
};
const operationOf = (endpoint: Endpoint) => buildOpenApi().paths[endpoint.path]![endpoint.method] as Operation;
const key = (endpoint: Endpoint) => `${endpoint.method.toUpperCase()} ${endpoint.path}`;
const enveloped = ENDPOINTS.filter((endpoint) => !endpoint.produces);

describe('the documented responses and examples', () => {
  test('every JSON operation documents its success answer: a data schema, or none', () => {
    const undocumented = enveloped.filter((endpoint) => !endpoint.data === !endpoint.noData).map(key);
    expect(undocumented).toEqual([]);
    expect(enveloped.filter((endpoint) => endpoint.data).length).toBeGreaterThanOrEqual(70);
  });

  test.each(ENDPOINTS.map((endpoint) => [key(endpoint), endpoint] as const))('%s: its examples are valid', (_key, endpoint) => {
    const operation = operationOf(endpoint);
    const schema = endpoint.body ?? endpoint.form;
    if (schema) {
      const example = Object.values(operation.requestBody!.content)[0]!.example;
      expect(example).toEqual(endpoint.example);
      expect(schema.safeParse(example).error?.issues ?? []).toEqual([]);
    }
    const answer = operation.responses['200'] ?? operation.responses['303']!;
    if (!answer.content) return;
    const { example } = Object.values(answer.content)[0]!;
    expect(example).toBeDefined();
    if (endpoint.produces === 'jwks') expect(endpoint.data!.safeParse(example).error?.issues ?? []).toEqual([]);
    else if (!endpoint.produces) {
      const envelope = example as { success: boolean; data?: unknown; pagination?: unknown };
      expect(envelope.success).toBe(true);
      if (endpoint.data) expect(endpoint.data.safeParse(envelope.data).error?.issues ?? []).toEqual([]);
      expect(envelope.pagination !== undefined).toBe(!!endpoint.paged);
    }
  });

  test.each(enveloped.filter((endpoint) => endpoint.data).map((endpoint) => [key(endpoint), endpoint] as const))(
    '%s: its data schema refuses a field it does not name, and one it requires missing',
    (_key, endpoint) => {
      const example = (Object.values(operationOf(endpoint).responses['200']!.content!)[0]!.example as { data: unknown }).data;
      const item = Array.isArray(example) ? example[0] : example;
      if (item === null || typeof item !== 'object') return expect(endpoint.data!.safeParse({ unexpected: 1 }).success).toBe(false);
      const wrap = (value: unknown) => (Array.isArray(example) ? [value] : value);
      expect(endpoint.data!.safeParse(wrap({ ...item, unexpected: 1 })).success).toBe(false);
      const [first] = Object.keys(item as object);
      const { [first!]: _dropped, ...missing } = item as Record<string, unknown>;
      expect(endpoint.data!.safeParse(wrap(missing)).success).toBe(false);
    },
  );

  test('links lead from a create to operations on what it made, with a parameter its answer has', () => {
    const linked = ENDPOINTS.filter((endpoint) => endpoint.links);
    expect(linked.length).toBeGreaterThanOrEqual(10);
    for (const endpoint of linked) {
      const answer = operationOf(endpoint).responses['200'] as { links: Record<string, { parameters: Record<string, string> }> };
      const example = Object.values(operationOf(endpoint).responses['200']!.content!)[0]!.example;
      for (const link of Object.values(answer.links)) {
        for (const expression of Object.values(link.parameters)) {
          const pointer = expression.replace('$response.body#/', '').split('/');
          const value = pointer.reduce<unknown>((at, part) => (at as Record<string, unknown>)?.[part], example);
          expect([key(endpoint), expression, typeof value]).toEqual([key(endpoint), expression, 'string']);
        }
      }
    }
  });

  test('request schemas carry what the validators check: reference formats, 2-decimal money, non-blank text, required query keys', () => {
    const document = buildOpenApi();
    const payout = document.paths['/wallets/users/{userReferenceId}/payout-request']!.post as unknown as {
      parameters: Array<{ schema: { pattern?: string } }>;
      requestBody: { content: { 'application/json': { schema: { properties: Record<string, { pattern?: string }> } } } };
    };
    const reference = new RegExp(payout.parameters[0]!.schema.pattern!);
    expect(reference.test('MKT-USR-7Q2M9XKD')).toBe(true);
    expect(reference.test('MKT-CON-7Q2M9XKD')).toBe(false);
    const amount = new RegExp(payout.requestBody.content['application/json'].schema.properties.amount!.pattern!);
    expect(['150.00', '0.01', '12'].map((value) => amount.test(value))).toEqual([true, true, true]);
    expect(['0', '0.00', '1.005', '-1', 'abc'].map((value) => amount.test(value))).toEqual([false, false, false, false, false]);
    const topUp = document.paths['/wallets/users/{userReferenceId}/topup']!.post as unknown as {
      requestBody: { content: { 'application/json': { schema: { properties: Record<string, { multipleOf?: number }> } } } };
    };
    expect(topUp.requestBody.content['application/json'].schema.properties.amount!.multipleOf).toBe(0.01);
    const idempotent = ENDPOINTS.filter((endpoint) =>
      (operationOf(endpoint) as unknown as { parameters: Array<{ name: string; in: string }> }).parameters.some(
        (parameter) => parameter.in === 'header' && parameter.name === 'Idempotency-Key',
      ),
    ).map(key);
    expect(idempotent.sort()).toEqual([
      'POST /consultations/bookings',
      'POST /v1/wallet/transfers',
      'POST /wallets/users/{userReferenceId}/payout-request',
      'POST /wallets/users/{userReferenceId}/topup',
    ]);
    const slots = document.paths['/consultations/{id}/slots']!.get as unknown as { parameters: Array<{ name: string; required: boolean }> };
    expect(slots.parameters.filter((parameter) => parameter.required).map((parameter) => parameter.name)).toEqual(['id', 'from', 'to']);
  });
});

type Responses = Record<string, { $ref?: string; description?: string; headers?: Record<string, { required?: boolean }> }>;
const responsesOf = (method: Endpoint['method'], path: string) =>
  (buildOpenApi().paths[path]![method] as unknown as { responses: Responses }).responses;
const statusesOf = (method: Endpoint['method'], path: string) => Object.keys(responsesOf(method, path));

describe('the documented error answers', () => {
  test('are those the operation can give: no 401 where no credentials are read, no 409 where nothing conflicts', () => {
    expect(statusesOf('post', '/v1/auth/register')).not.toContain('401');
    expect(statusesOf('post', '/v1/auth/register')).toEqual(expect.arrayContaining(['400', '409', '413', '422', '429', '503']));
    expect(statusesOf('get', '/wallets/banks').sort()).toEqual(['200', '401', '405', '429', '502', '503', '504']);
    expect(statusesOf('get', '/physical-products/categories')).not.toContain('401');
    // A listing of the caller's own is 403 for someone else's; a public read that verifies a
    // token when one is sent is 401 for a bad one.
    expect(statusesOf('get', '/customers/seller/{sellerId}')).toEqual(expect.arrayContaining(['403']));
    expect(statusesOf('get', '/consultations/{id}')).toEqual(expect.arrayContaining(['401', '404']));
    expect(statusesOf('post', '/wallets/payout-requests/{referenceId}/approve')).toEqual(expect.arrayContaining(['403', '409']));
  });

  test('405 and the gateway’s 502/503/504 are shared responses every proxied operation refers to', () => {
    const document = buildOpenApi();
    const shared = document.components.responses as Record<string, { headers?: Record<string, { required?: boolean }> }>;
    for (const endpoint of ENDPOINTS.filter((candidate) => candidate.service !== 'gateway')) {
      const responses = responsesOf(endpoint.method, endpoint.path);
      expect([
        key(endpoint),
        ['405', '502', '503', '504'].map((status) => responses[status]?.$ref ?? responses[status]?.description),
      ]).toEqual([
        key(endpoint),
        [
          '#/components/responses/MethodNotAllowed',
          expect.stringMatching(/BadGateway$|bad_gateway/),
          '#/components/responses/Unavailable',
          '#/components/responses/GatewayTimeout',
        ],
      ]);
    }
    expect(shared.MethodNotAllowed!.headers!.Allow!.required).toBe(true);
    expect(shared.RateLimited!.headers!['Retry-After']!.required).toBe(true);
    // The gateway's own endpoints have no upstream: no 502 or 504; JWKS reads no database.
    expect(statusesOf('post', '/v1/auth/login')).not.toEqual(expect.arrayContaining(['502']));
    expect(statusesOf('get', '/v1/auth/.well-known/jwks.json').sort()).toEqual(['200', '405', '429']);
  });

  test('every reference resolves, and an operation’s own response names the codes it may carry', () => {
    const document = buildOpenApi();
    for (const endpoint of ENDPOINTS) {
      for (const [status, response] of Object.entries(responsesOf(endpoint.method, endpoint.path))) {
        if (response.$ref) expect(document.components.responses).toHaveProperty(response.$ref.split('/').pop()!);
        else expect([key(endpoint), status, response.description]).toEqual([key(endpoint), status, expect.any(String)]);
      }
    }
    const booking = responsesOf('post', '/consultations/bookings')['422']!.description!;
    for (const code of ['insufficient_funds', 'slot_unavailable', 'coupon_invalid', 'price_mismatch'])
      expect(booking).toContain(`\`${code}\``);
    expect(responsesOf('post', '/v1/wallet/transfers')['422']!.description).toContain('`currency_mismatch`');
    expect(errorAnswers(ENDPOINTS.find((endpoint) => endpoint.path === '/v1/wallet/transfers')!).get(422)).toContain('currency_mismatch');
  });

  test('a coupon code is documented as accepted, in either case, and said to be upper-cased', () => {
    const discount = buildOpenApi().paths['/consultations/pricing/promotional-discounts']!.post as unknown as {
      requestBody: {
        content: { 'application/json': { schema: { properties: { couponCode: { pattern: string; description: string } } } } };
      };
    };
    const { pattern, description } = discount.requestBody.content['application/json'].schema.properties.couponCode;
    const body = (couponCode: string) => ({
      name: 'Launch',
      discountType: 'Percentage',
      discountValue: 10,
      validFrom: '2026-12-01T00:00:00.000Z',
      validTo: '2026-12-31T00:00:00.000Z',
      couponCode,
      maxUses: 5,
    });
    // The pattern and the validator agree: what one admits, the other accepts.
    for (const code of ['speca18463', 'LAUNCH10', 'Mixed_Case-1', 'ab', 'ßßß', 'ﬀﬀﬀ', 'with space']) {
      expect([code, new RegExp(pattern).test(code)]).toEqual([code, CreateDiscountBody.safeParse(body(code)).success]);
    }
    expect(CreateDiscountBody.parse(body('speca18463')).couponCode).toBe('SPECA18463');
    expect(description).toMatch(/upper-cased/);
  });
});
