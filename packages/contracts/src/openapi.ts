import { z } from 'zod';
import { ErrorBody } from './envelope';
import { ErrorCode } from './error-codes';
import { ENDPOINTS, type Endpoint } from './api';
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
const ERRORS = { description: 'The error envelope', content: json({ $ref: '#/components/schemas/ErrorBody' }) };
const PAGINATION_EXAMPLE = { page: 1, limit: 20, total: 1 };

/** The success answer: the envelope around `data` (strict), or another kind of body. */
function success(endpoint: Endpoint): Record<string, unknown> {
  if (endpoint.produces === 'jwks') {
    const body = schema(endpoint.data!, 'output');
    return { '200': { description: 'JSON Web Key Set', content: json(body, exampleOf(body)) } };
  }
  const closed = html('Closed or expired: the top-up is no longer open');
  if (endpoint.produces === 'html') return { '200': html('An HTML page'), '404': html('Not found'), '409': closed };
  if (endpoint.produces === 'redirect') {
    const redirect = {
      description: 'See Other: back to the client’s redirectUrl with status and reference',
      headers: { Location: { required: true, schema: { type: 'string', format: 'uri' } } },
    };
    return {
      ...(endpoint.method === 'get' ? { '200': html('The payment’s state, when the client’s address is no longer allowed') } : {}),
      '303': redirect,
      '404': html('Not found'),
      '409': closed,
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
    Object.entries(endpoint.links ?? {}).map(([target, parameters]) => {
      const [method, path] = target.split(' ');
      const found = ENDPOINTS.find((candidate) => candidate.method === method && candidate.path === path);
      if (!found) throw new Error(`A link of ${endpoint.method} ${endpoint.path} leads to ${target}, which the table does not have`);
      return [operationId(found), { operationId: operationId(found), parameters }];
    }),
  );
}

function operation(endpoint: Endpoint) {
  const body = requestBody(endpoint);
  const errors = Object.fromEntries(
    ['400', '401', '403', '404', '409', ...(body ? ['413'] : []), '422', '429'].map((status) => [status, ERRORS]),
  );
  return {
    tags: [endpoint.service],
    summary: endpoint.summary,
    operationId: operationId(endpoint),
    ...(endpoint.access === 'bearer' || endpoint.access === 'admin' ? { security: [{ bearer: [] }] } : { security: [] }),
    ...(endpoint.access === 'admin' ? { description: 'Admins only.' } : {}),
    parameters: parameters(endpoint),
    ...(body ? { requestBody: body } : {}),
    responses: { ...errors, ...success(endpoint) },
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
