import { z } from 'zod';
import { ErrorBody } from './envelope';
import { ENDPOINTS, type Endpoint, type ErrorStatus } from './api';
import { ErrorCode } from './error-codes';
import { IsoDate } from './consultation';
import { MAX_EXACT_MAJOR_NUMBER, NonNegativeMajorAmount, PositiveDecimalString, PositiveMajorAmount } from './money';
import { PaginationResponse } from './responses/common';

type JsonSchema = Record<string, unknown>;
type Io = 'input' | 'output';

interface ZodInternals {
  _zod: {
    def: {
      type: string;
      checks?: Array<{ _zod: { def: { check: string; tx?: unknown; error?: unknown } } }>;
      in?: z.ZodType;
      out?: z.ZodType;
    };
  };
}

/** What the wallet accepts as an Idempotency-Key. */
const IDEMPOTENCY_KEY = '^[A-Za-z0-9_\\-:.]{1,200}$';
/** A positive decimal string of at most 2 decimals that fits a safe integer of minor units. */
const POSITIVE_DECIMAL = '^([1-9][0-9]{0,12}(\\.[0-9]{1,2})?|0\\.(0[1-9]|[1-9][0-9]?))$';

/**
 * What the validators check but a plain JSON Schema conversion loses, put back so the document
 * is as strict as the validation: money with at most 2
 * decimals (a transform), trimmed strings that must not be blank, e-mail formats behind a
 * `pipe`, real calendar dates, "send at least one field".
 */
function restoreConstraints(ctx: { zodSchema: unknown; jsonSchema: JsonSchema }): void {
  const schema = ctx.zodSchema as ZodInternals;
  const json = ctx.jsonSchema;
  const def = schema._zod.def;
  if (ctx.zodSchema === PositiveMajorAmount || ctx.zodSchema === NonNegativeMajorAmount) {
    json.multipleOf = 0.01;
    json.exclusiveMaximum = MAX_EXACT_MAJOR_NUMBER;
    if (ctx.zodSchema === PositiveMajorAmount) json.exclusiveMinimum = 0;
    else json.minimum = 0;
  }
  if (ctx.zodSchema === PositiveDecimalString) {
    json.type = 'string';
    json.pattern = POSITIVE_DECIMAL;
  }
  if (ctx.zodSchema === IsoDate) json.format = 'date';
  if (def.type === 'pipe' && def.out && (def.out as unknown as ZodInternals)._zod.def.type === 'string') {
    const { format, pattern } = z.toJSONSchema(def.out, { io: 'input' }) as JsonSchema;
    if (format) json.format = format;
    if (pattern) json.pattern = pattern;
  }
  for (const check of def.checks ?? []) {
    const { check: kind, tx, error } = check._zod.def;
    if (kind === 'overwrite' && String(tx).includes('.trim()') && typeof json.minLength === 'number' && json.minLength > 0) {
      json.pattern ??= '\\S';
    }
    if (kind !== 'custom' || typeof error !== 'function') continue;
    const message = String((error as () => unknown)());
    if (message === 'Send at least one field') json.minProperties = 1;
  }
  // An e-mail address is what its pattern (the validator's own) says; `format: email` means a
  // different, tool-dependent rule, under which a tool would call valid addresses invalid.
  if (json.format === 'email' && typeof json.pattern === 'string') delete json.format;
}

const schema = (type: z.ZodType, io: Io = 'input'): JsonSchema => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(type, {
    io,
    unrepresentable: 'any',
    override: (ctx) => restoreConstraints(ctx as unknown as { zodSchema: unknown; jsonSchema: JsonSchema }),
  }) as JsonSchema;
  return rest;
};

const FORMAT_EXAMPLES: Record<string, unknown> = {
  'date-time': '2026-11-23T09:00:00.000Z',
  date: '2026-11-26',
  uuid: '3f1c2a7e-8d4b-4c1e-9a2f-5b6c7d8e9f01',
  email: 'sara@example.com',
  uri: 'https://example.com/',
};

/** An example value of a JSON Schema: its own example, else one composed from its parts. */
export function exampleOf(json: JsonSchema): unknown {
  if (Array.isArray(json.examples) && json.examples.length > 0) return json.examples[0];
  if ('const' in json) return json.const;
  if (Array.isArray(json.enum)) return json.enum[0];
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = json[key] as JsonSchema[] | undefined;
    if (branches) return exampleOf(branches.find((branch) => branch.type !== 'null') ?? branches[0]!);
  }
  const type = Array.isArray(json.type) ? (json.type as string[]).find((t) => t !== 'null') : (json.type as string | undefined);
  switch (type) {
    case 'object':
      return Object.fromEntries(
        Object.entries((json.properties ?? {}) as Record<string, JsonSchema>).map(([key, value]) => [key, exampleOf(value)]),
      );
    case 'array':
      return json.items ? [exampleOf(json.items as JsonSchema)] : [];
    case 'string':
      return FORMAT_EXAMPLES[json.format as string] ?? 'text';
    case 'integer':
    case 'number':
      return typeof json.minimum === 'number' ? json.minimum : 1;
    case 'boolean':
      return true;
    default:
      return null;
  }
}

function parameters(endpoint: Endpoint) {
  const params = endpoint.params ? schema(endpoint.params) : { properties: {} };
  const path = [...endpoint.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: ((params.properties ?? {}) as Record<string, JsonSchema>)[name!] ?? { type: 'string' },
  }));
  const query = endpoint.query ? schema(endpoint.query) : null;
  const required = new Set((query?.required ?? []) as string[]);
  const queries = Object.entries((query?.properties ?? {}) as Record<string, JsonSchema>).map(([name, s]) => ({
    name,
    in: 'query',
    required: required.has(name),
    schema: s,
  }));
  const headers = endpoint.idempotent
    ? [
        {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description: 'The same key and body answer the first response again; the same key with another body is 409.',
          schema: { type: 'string', pattern: IDEMPOTENCY_KEY },
          example: 'topup-2026-11-23-0001',
        },
      ]
    : [];
  return [...path, ...queries, ...headers];
}

const json = (s: JsonSchema, example?: unknown) => ({ 'application/json': { schema: s, ...(example === undefined ? {} : { example }) } });
const html = (
  description: string,
  example = '<!doctype html><html lang="en"><head><title>Checkout</title></head><body>…</body></html>',
) => ({
  description,
  content: { 'text/html': { schema: { type: 'string' }, example } },
});
const PAGINATION_EXAMPLE = { page: 1, limit: 20, total: 1 };

/** The success answer: the envelope around `data` (strict), or another kind of body. */
function success(endpoint: Endpoint): Record<string, unknown> {
  if (endpoint.produces === 'jwks') {
    const body = schema(endpoint.data!, 'output');
    return { '200': { description: 'JSON Web Key Set', content: json(body, exampleOf(body)) } };
  }
  if (endpoint.produces === 'html') return { '200': html('An HTML page') };
  if (endpoint.produces === 'redirect') {
    const redirect = {
      description: 'See Other: back to the client’s redirectUrl with status and reference',
      headers: { Location: { required: true, schema: { type: 'string', format: 'uri' } } },
    };
    return {
      ...(endpoint.method === 'get' ? { '200': html('The payment’s state, when the client’s address is no longer allowed') } : {}),
      '303': redirect,
    };
  }
  if (endpoint.noData) {
    const body = {
      type: 'object',
      required: ['success', 'message'],
      properties: { success: { const: true }, message: { type: 'string' } },
      additionalProperties: false,
    };
    return { '200': { description: 'Done', content: json(body, { success: true, message: 'Done' }) } };
  }
  const data = schema(endpoint.data!, 'output');
  const body = {
    type: 'object',
    required: ['success', 'data', ...(endpoint.paged ? ['pagination'] : [])],
    properties: {
      success: { const: true },
      message: { type: 'string' },
      data,
      ...(endpoint.paged ? { pagination: { $ref: '#/components/schemas/Pagination' } } : {}),
    },
    additionalProperties: false,
  };
  const example = { success: true, data: exampleOf(data), ...(endpoint.paged ? { pagination: PAGINATION_EXAMPLE } : {}) };
  const next = links(endpoint);
  return { '200': { description: 'Success', content: json(body, example), ...(Object.keys(next).length ? { links: next } : {}) } };
}

function requestBody(endpoint: Endpoint) {
  // Required unless an empty object would do: a missing body is read as `{}` (kit `withInput`).
  if (endpoint.body) return { required: !endpoint.body.safeParse({}).success, content: json(schema(endpoint.body), endpoint.example) };
  if (endpoint.form) {
    return {
      required: true,
      content: { 'application/x-www-form-urlencoded': { schema: schema(endpoint.form), example: endpoint.example } },
    };
  }
  if (endpoint.example) return { required: true, content: json({ type: 'object' }, endpoint.example) };
  return undefined;
}

const operationId = (endpoint: Pick<Endpoint, 'method' | 'path'>) =>
  `${endpoint.method}${endpoint.path.replace(/[^A-Za-z0-9]+(\w)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`;

/** OpenAPI links of a success: to the operations on the record it made. */
function links(endpoint: Endpoint) {
  return Object.fromEntries(
    Object.entries(endpoint.links ?? {}).map(([target, linkParameters]) => {
      const [method, path] = target.split(' ');
      const found = ENDPOINTS.find((candidate) => candidate.method === method && candidate.path === path);
      if (!found) throw new Error(`A link of ${endpoint.method} ${endpoint.path} leads to ${target}, which the table does not have`);
      return [operationId(found), { operationId: operationId(found), parameters: linkParameters }];
    }),
  );
}

/** Each error status: the shared response of `components.responses`, its usual code, what it means. */
const ERROR_STATUSES: Record<ErrorStatus, { name: string; code: ErrorCode; description: string; header?: string }> = {
  400: { name: 'Invalid', code: 'invalid', description: 'The request does not match its schema: one `errors` item per offending field' },
  401: { name: 'Unauthenticated', code: 'unauthenticated', description: 'No valid credentials' },
  403: { name: 'Forbidden', code: 'forbidden', description: 'Someone else’s record, or a role the caller lacks' },
  404: { name: 'NotFound', code: 'not_found', description: 'No such record, or none the caller may know of' },
  405: {
    name: 'MethodNotAllowed',
    code: 'method_not_allowed',
    description: 'The path does not serve this method; `Allow` lists those it serves',
    header: 'Allow',
  },
  409: { name: 'Conflict', code: 'conflict', description: 'A duplicate, or a move the current state does not allow' },
  413: { name: 'PayloadTooLarge', code: 'payload_too_large', description: 'The body is larger than the limit' },
  415: { name: 'UnsupportedMediaType', code: 'unsupported_media_type', description: 'The body’s content encoding is not supported' },
  422: { name: 'RuleBroken', code: 'invalid', description: 'The request matches its schema but breaks a rule' },
  429: {
    name: 'RateLimited',
    code: 'rate_limited',
    description: 'Too many requests; `Retry-After` says when to try again',
    header: 'Retry-After',
  },
  502: { name: 'BadGateway', code: 'bad_gateway', description: 'A service behind the gateway failed to answer' },
  503: { name: 'Unavailable', code: 'unavailable', description: 'A service or its database is unavailable; try again shortly' },
  504: { name: 'GatewayTimeout', code: 'gateway_timeout', description: 'The service behind the gateway did not answer in time' },
};

const HEADERS: Record<string, { description: string; schema: JsonSchema }> = {
  Allow: { description: 'The methods this path serves', schema: { type: 'string' } },
  'Retry-After': { description: 'Seconds to wait', schema: { type: 'string', pattern: '^[0-9]+$' } },
};

/**
 * The error statuses an operation may answer and the codes each carries: what its entry implies
 * — 400 for validated input, 401 behind credentials, 403 for admins only, 404 for a path
 * parameter (also for a value that is no path segment, such as `..`, which the gateway refuses),
 * 405 for another method on its path, 409 for an Idempotency-Key, 413 and 415 for a body, 429
 * for the gateway's per-client limits, 502/503/504 for a service behind the gateway (503 also
 * for the gateway's own database) — merged with the entry's own `errors`.
 */
export function errorAnswers(endpoint: Endpoint): Map<ErrorStatus, ErrorCode[]> {
  const takesBody = Boolean(endpoint.body || endpoint.form || endpoint.example);
  const proxied = endpoint.service !== 'gateway';
  const implied: Array<[ErrorStatus, boolean]> = [
    [400, Boolean(endpoint.params || endpoint.query || endpoint.body || endpoint.form)],
    [401, endpoint.access !== 'public'],
    [403, endpoint.access === 'admin'],
    [404, /\{\w+\}/.test(endpoint.path)],
    [405, true],
    [409, Boolean(endpoint.idempotent)],
    [413, takesBody],
    [415, takesBody],
    [429, true],
    [502, proxied],
    [503, true],
    [504, proxied],
  ];
  const answers = new Map<ErrorStatus, Set<ErrorCode>>();
  for (const [status, applies] of implied) if (applies) answers.set(status, new Set([ERROR_STATUSES[status].code]));
  for (const [key, codes] of Object.entries(endpoint.errors ?? {})) {
    const status = Number(key) as ErrorStatus;
    if (codes === false) answers.delete(status);
    else answers.set(status, new Set([...(answers.get(status) ?? []), ...(codes === true ? [ERROR_STATUSES[status].code] : codes)]));
  }
  return new Map([...answers].sort(([a], [b]) => a - b).map(([status, codes]) => [status, [...codes]]));
}

/** A shared error response, with the header its status always carries. */
function errorResponse(status: ErrorStatus, codes: readonly ErrorCode[]) {
  const { description, header } = ERROR_STATUSES[status];
  return {
    description: `${description} (${codes.map((code) => `\`${code}\``).join(', ')})`,
    ...(header ? { headers: { [header]: { required: true, ...HEADERS[header] } } } : {}),
    content: json({ $ref: '#/components/schemas/ErrorBody' }),
  };
}

/**
 * The error responses of an operation: a reference to the shared response where the status
 * carries its usual code, else its own naming the codes. The checkout pages answer 404 and 409
 * with an HTML page.
 */
function errorResponses(endpoint: Endpoint): Record<string, unknown> {
  const pages = endpoint.produces === 'html' || endpoint.produces === 'redirect';
  return Object.fromEntries(
    [...errorAnswers(endpoint)].map(([status, codes]) => {
      if (pages && status === 404) return [status, html('Not found: no such top-up, or a token that is not its own')];
      if (pages && status === 409) return [status, html('Closed or expired: the top-up is no longer open')];
      const usual = codes.length === 1 && codes[0] === ERROR_STATUSES[status].code;
      return [status, usual ? { $ref: `#/components/responses/${ERROR_STATUSES[status].name}` } : errorResponse(status, codes)];
    }),
  );
}

function operation(endpoint: Endpoint) {
  const body = requestBody(endpoint);
  return {
    tags: [endpoint.service],
    summary: endpoint.summary,
    operationId: operationId(endpoint),
    ...(endpoint.access === 'bearer' || endpoint.access === 'admin' ? { security: [{ bearer: [] }] } : { security: [] }),
    ...(endpoint.access === 'admin' ? { description: 'Admins only.' } : {}),
    parameters: parameters(endpoint),
    ...(body ? { requestBody: body } : {}),
    responses: { ...success(endpoint), ...errorResponses(endpoint) },
  };
}

/**
 * The whole success body of an operation as its OpenAPI document describes it, for checking
 * real answers: the envelope (strict) around `data`, or the bare body of a non-envelope JSON
 * answer (JWKS). Null for HTML pages and redirects.
 */
export function successBodySchema(endpoint: Endpoint): z.ZodType | null {
  if (endpoint.produces === 'jwks') return endpoint.data ?? null;
  if (endpoint.produces) return null;
  if (endpoint.noData) return z.strictObject({ success: z.literal(true), message: z.string() });
  return z.strictObject({
    success: z.literal(true),
    message: z.string().optional(),
    data: endpoint.data ?? z.never(),
    ...(endpoint.paged ? { pagination: PaginationResponse } : {}),
  });
}

/** The error envelope, its `code` listing the stable codes clients may branch on. */
function errorBodySchema(): JsonSchema {
  const body = schema(ErrorBody) as { properties: { errors: { items: { properties: { code: JsonSchema } } } } };
  body.properties.errors.items.properties.code = {
    ...body.properties.errors.items.properties.code,
    description: 'A stable error code; clients branch on it, never on the message.',
    examples: Object.values(ErrorCode),
  };
  return body;
}

/** The OpenAPI 3.1 document of every endpoint behind the gateway, built from the zod schemas. */
export function buildOpenApi(serverUrl = '/') {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const endpoint of ENDPOINTS) (paths[endpoint.path] ??= {})[endpoint.method] = operation(endpoint);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Marketplace API',
      version: '0.1.0',
      description: 'Wallets, products, customer relationships, consultations and reviews, through one gateway.',
    },
    servers: [{ url: serverUrl }],
    tags: ['gateway', 'wallet', 'catalog', 'crm', 'consultation', 'review'].map((name) => ({ name })),
    components: {
      responses: Object.fromEntries(
        Object.entries(ERROR_STATUSES).map(([status, { name, code }]) => [name, errorResponse(Number(status) as ErrorStatus, [code])]),
      ),
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT (RS256), from /v1/auth/login' } },
      schemas: {
        ErrorBody: {
          ...errorBodySchema(),
          example: {
            success: false,
            message: 'Validation failed',
            errors: [{ path: 'amount', code: 'invalid', message: 'The amount must be greater than zero' }],
          },
        },
        Pagination: {
          type: 'object',
          required: ['page', 'limit', 'total'],
          properties: {
            page: { type: 'integer', minimum: 1 },
            limit: { type: 'integer', minimum: 1 },
            total: { type: 'integer', minimum: 0 },
          },
          additionalProperties: false,
        },
      },
    },
    paths,
  };
}
