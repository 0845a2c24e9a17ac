import { z } from 'zod';
import { createDocument, createSchema, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject } from 'zod-openapi';
import { ErrorBody } from './envelope';
import { ENDPOINTS, type Endpoint, type ErrorStatus } from './api';
import type { ErrorCode } from './error-codes';
import { PaginationResponse } from './responses/common';
import { contractsVersion } from './version';

/**
 * The OpenAPI 3.1 document, generated from the endpoint table (`api.ts`) by zod-openapi, a
 * maintained zod-to-OpenAPI library built on zod's own JSON Schema conversion. Every request
 * body and every response `data` carries a component name (`.meta({ id })` beside its schema),
 * so it is a named schema of `components.schemas` referenced with `$ref`. What a validator checks
 * but JSON Schema cannot derive (a trim, "at least one field", money with 2 decimals) is metadata
 * on the schema (`schema-meta.ts`); nothing here reads zod's internals or an error message.
 */

type JsonSchema = Record<string, unknown>;

/** What the wallet accepts as an Idempotency-Key. */
const IDEMPOTENCY_KEY = '^[A-Za-z0-9_\\-:.]{1,200}$';

const FORMAT_EXAMPLES: Record<string, unknown> = {
  'date-time': '2026-11-23T09:00:00.000Z',
  date: '2026-11-26',
  uuid: '3f1c2a7e-8d4b-4c1e-9a2f-5b6c7d8e9f01',
  email: 'sara@example.com',
  uri: 'https://example.com/',
};

const COMPONENT_REF = '#/components/schemas/';

/**
 * An example value of a JSON Schema: its own example, else one composed from its parts; a
 * `$ref` to a named component is followed in `components`.
 */
export function exampleOf(json: JsonSchema, components: Record<string, JsonSchema> = {}): unknown {
  if (typeof json.$ref === 'string' && json.$ref.startsWith(COMPONENT_REF)) {
    const target = components[json.$ref.slice(COMPONENT_REF.length)];
    if (!target) throw new Error(`No component ${json.$ref} to compose an example from`);
    return exampleOf(target, components);
  }
  if (Array.isArray(json.examples) && json.examples.length > 0) return json.examples[0];
  if ('const' in json) return json.const;
  if (Array.isArray(json.enum)) return json.enum[0];
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = json[key] as JsonSchema[] | undefined;
    if (branches) return exampleOf(branches.find((branch) => branch.type !== 'null') ?? branches[0]!, components);
  }
  // Nullable, and an object that can hold nothing (logout's `data`): null is what it answers. (No
  // `examples: [null]` on it: openapi-generator warns of a schema it cannot name.)
  if (Array.isArray(json.type) && json.type.includes('null') && json.maxProperties === 0) return null;
  const type = Array.isArray(json.type) ? (json.type as string[]).find((t) => t !== 'null') : (json.type as string | undefined);
  switch (type) {
    case 'object':
      return Object.fromEntries(
        Object.entries((json.properties ?? {}) as Record<string, JsonSchema>).map(([key, value]) => [key, exampleOf(value, components)]),
      );
    case 'array':
      return json.items ? [exampleOf(json.items as JsonSchema, components)] : [];
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

/** An example of what a schema answers, composed from its JSON Schema (components followed). */
function exampleOfOutput(type: z.ZodType): unknown {
  const { schema, components } = createSchema(type, { io: 'output' });
  return exampleOf(schema as JsonSchema, components as Record<string, JsonSchema>);
}

/** The names of the path parameters a params schema describes (of its JSON Schema, not zod's internals). */
function describedParams(params: z.ZodType | undefined): Set<string> {
  if (!params) return new Set();
  const { schema } = createSchema(params, { io: 'input' });
  return new Set(Object.keys(((schema as JsonSchema).properties ?? {}) as object));
}

/**
 * The parameters of an operation: its path and query schemas (expanded by the library, path
 * first), a plain string for a path parameter no schema describes, and the Idempotency-Key.
 */
function parameters(endpoint: Endpoint): Pick<ZodOpenApiOperationObject, 'requestParams' | 'parameters'> {
  const described = describedParams(endpoint.params);
  const placeholders = [...endpoint.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => name!);
  const stray = [...described].filter((name) => !placeholders.includes(name));
  if (stray.length) throw new Error(`${endpoint.method} ${endpoint.path}: its params schema names ${stray.join(', ')}, not in its path`);
  const undescribed = placeholders
    .filter((name) => !described.has(name))
    .map((name) => ({ name, in: 'path' as const, required: true, schema: { type: 'string' as const } }));
  const headers = endpoint.idempotent
    ? [
        {
          name: 'Idempotency-Key',
          in: 'header' as const,
          required: false,
          description: 'The same key and body answer the first response again; the same key with another body is 409.',
          schema: { type: 'string' as const, pattern: IDEMPOTENCY_KEY },
          example: 'topup-2026-11-23-0001',
        },
      ]
    : [];
  const requestParams = {
    ...(endpoint.params ? { path: endpoint.params as z.ZodObject } : {}),
    ...(endpoint.query ? { query: endpoint.query as z.ZodObject } : {}),
  };
  const manual = [...undescribed, ...headers];
  return {
    ...(Object.keys(requestParams).length ? { requestParams } : {}),
    // Always a list, empty when there is nothing to send.
    parameters: manual,
  };
}

const html = (
  description: string,
  example = '<!doctype html><html lang="en"><head><title>Checkout</title></head><body>…</body></html>',
) => ({
  description,
  content: { 'text/html': { schema: { type: 'string' as const }, example } },
});
/** The first lines of each CSV export, by path (a header row alone for one not listed). */
const CSV_EXAMPLES: Record<string, string> = {
  '/v1/wallet/transactions.csv':
    'id,postedAt,type,reference,currency,availableDeltaMinor,heldDeltaMinor,availableAfterMinor,heldAfterMinor\r\n' +
    'topup:5b6c7d8e-9f01-4c1e-9a2f-3f1c2a7e8d4b:credit,2026-11-23T09:00:00.000Z,topup_credit,MKT-TOP-UP-7Q2M9XKD,ETB,30000,0,30000,0\r\n',
  '/v1/admin/audit-log/export':
    'id,at,action,actorId\r\n3f1c2a7e-8d4b-4c1e-9a2f-5b6c7d8e9f01,2026-11-23T09:00:00.000Z,payout.approve,…\r\n',
};
const PAGINATION_EXAMPLE = { page: 1, limit: 20, total: 1 };

/** The success answer: the envelope around `data` (strict), or another kind of body. */
function success(endpoint: Endpoint): ZodOpenApiOperationObject['responses'] {
  if (endpoint.produces === 'jwks') {
    return {
      '200': {
        description: 'JSON Web Key Set',
        content: { 'application/json': { schema: endpoint.data!, example: exampleOfOutput(endpoint.data!) } },
      },
    };
  }
  if (endpoint.produces === 'html') return { '200': html('An HTML page') };
  if (endpoint.produces === 'csv') {
    return {
      '200': {
        description: 'A CSV file (RFC 4180, a header row first), sent as an attachment',
        content: { 'text/csv': { schema: { type: 'string' as const }, example: CSV_EXAMPLES[endpoint.path] ?? 'id\r\n' } },
      },
    };
  }
  if (endpoint.produces === 'redirect') {
    const note = { schema: { type: 'string' as const }, example: 'See Other. Redirecting to https://example.com/done?status=Completed' };
    const redirect = {
      description:
        'See Other: back to the client’s redirectUrl with status and reference. The body is a short note naming the address (as the `Accept` header asks: text or HTML); a client follows `Location`.',
      headers: { Location: { required: true, schema: { type: 'string' as const, format: 'uri' } } },
      content: { 'text/plain': note, 'text/html': note },
    };
    return {
      ...(endpoint.method === 'get' ? { '200': html('The payment’s state, when the client’s address is no longer allowed') } : {}),
      '303': redirect,
    };
  }
  const body = successBodySchema(endpoint)!;
  if (endpoint.noData) {
    return {
      '200': { description: 'Done', content: { 'application/json': { schema: body, example: { success: true, message: 'Done' } } } },
    };
  }
  const example = {
    success: true,
    data: exampleOfOutput(endpoint.data!),
    ...(endpoint.paged ? { pagination: PAGINATION_EXAMPLE } : {}),
  };
  const next = links(endpoint);
  return {
    '200': {
      description: 'Success',
      content: { 'application/json': { schema: body, example } },
      ...(Object.keys(next).length ? { links: next } : {}),
    },
  };
}

function requestBody(endpoint: Endpoint): ZodOpenApiOperationObject['requestBody'] {
  const example = endpoint.example === undefined ? {} : { example: endpoint.example };
  // Required unless an empty object would do: a missing body is read as `{}` (kit `withInput`).
  if (endpoint.body) {
    return { required: !endpoint.body.safeParse({}).success, content: { 'application/json': { schema: endpoint.body, ...example } } };
  }
  if (endpoint.form) return { required: true, content: { 'application/x-www-form-urlencoded': { schema: endpoint.form, ...example } } };
  if (endpoint.example) return { required: true, content: { 'application/json': { schema: { type: 'object' }, ...example } } };
  return undefined;
}

/** OpenAPI links of a success: to the operations on the record it made. */
function links(endpoint: Endpoint) {
  return Object.fromEntries(
    Object.entries(endpoint.links ?? {}).map(([target, linkParameters]) => {
      const [method, path] = target.split(' ');
      const found = ENDPOINTS.find((candidate) => candidate.method === method && candidate.path === path);
      if (!found) throw new Error(`A link of ${endpoint.method} ${endpoint.path} leads to ${target}, which the table does not have`);
      return [found.operationId, { operationId: found.operationId, parameters: linkParameters }];
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
    content: { 'application/json': { schema: { $ref: `${COMPONENT_REF}ErrorBody` } } },
  };
}

/**
 * The error responses of an operation: a reference to the shared response where the status
 * carries its usual code, else its own naming the codes. The checkout pages answer 404 and 409
 * with an HTML page; the receipts' pages answer errors with the envelope.
 */
function errorResponses(endpoint: Endpoint): Record<string, unknown> {
  // The checkout's public pages answer with a page; a page behind a token (a receipt) with the envelope.
  const pages = (endpoint.produces === 'html' && endpoint.access === 'public') || endpoint.produces === 'redirect';
  return Object.fromEntries(
    [...errorAnswers(endpoint)].map(([status, codes]) => {
      if (pages && status === 404) return [status, html('Not found: no such top-up, or a token that is not its own')];
      if (pages && status === 409) return [status, html('Closed or expired: the top-up is no longer open')];
      const usual = codes.length === 1 && codes[0] === ERROR_STATUSES[status].code;
      return [status, usual ? { $ref: `#/components/responses/${ERROR_STATUSES[status].name}` } : errorResponse(status, codes)];
    }),
  );
}

function operation(endpoint: Endpoint): ZodOpenApiOperationObject {
  const body = requestBody(endpoint);
  return {
    tags: [endpoint.service],
    summary: endpoint.summary,
    operationId: endpoint.operationId,
    ...(endpoint.access === 'bearer' || endpoint.access === 'admin' ? { security: [{ bearer: [] }] } : { security: [] }),
    ...(endpoint.access === 'admin' ? { description: 'Admins only.' } : {}),
    ...parameters(endpoint),
    ...(body ? { requestBody: body } : {}),
    responses: { ...success(endpoint), ...errorResponses(endpoint) } as ZodOpenApiOperationObject['responses'],
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

const ERROR_BODY_EXAMPLE = {
  success: false,
  message: 'Validation failed',
  errors: [{ path: 'amount', code: 'invalid', message: 'The amount must be greater than zero' }],
} as const;

/**
 * The error envelope as a request-side (`input`) schema: it names its fields but, unlike the
 * strict success envelope, does not refuse others. Its `code` lists the stable codes (metadata).
 */
function errorBodySchema(): JsonSchema & { example: typeof ERROR_BODY_EXAMPLE } {
  const { schema } = createSchema(ErrorBody, { io: 'input' });
  return { ...(schema as JsonSchema), example: ERROR_BODY_EXAMPLE };
}

/**
 * The gateway's address when no public URL is configured (its default port on this machine): the
 * gateway serves the document with its `PUBLIC_URL`, and generators need an absolute URL.
 */
export const DEFAULT_SERVER_URL = 'http://localhost:8080';

/** The OpenAPI 3.1 document as this module builds it: what readers of it may rely on. */
export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  servers: Array<{ url: string }>;
  tags: Array<{ name: string }>;
  components: {
    responses: Record<string, unknown>;
    securitySchemes: { bearer: { type: 'http'; scheme: 'bearer'; bearerFormat: string } };
    schemas: { ErrorBody: JsonSchema & { example: typeof ERROR_BODY_EXAMPLE } } & Record<string, JsonSchema>;
  };
  paths: Record<string, Record<string, unknown>>;
}

/** The OpenAPI 3.1 document of every endpoint behind the gateway, generated from the endpoint table. */
export function buildOpenApi(serverUrl = DEFAULT_SERVER_URL): OpenApiDocument {
  const paths: ZodOpenApiPathsObject = {};
  for (const endpoint of ENDPOINTS) (paths[endpoint.path] ??= {})[endpoint.method] = operation(endpoint);
  const securitySchemes = { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT (RS256), from /v1/auth/login' } } as const;
  const document = createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Marketplace API',
      version: contractsVersion(),
      description: 'Wallets, products, customer relationships, consultations and reviews, through one gateway.',
    },
    servers: [{ url: serverUrl }],
    tags: ['gateway', 'wallet', 'catalog', 'crm', 'consultation', 'review'].map((name) => ({ name })),
    components: {
      responses: Object.fromEntries(
        Object.entries(ERROR_STATUSES).map(([status, { name, code }]) => [name, errorResponse(Number(status) as ErrorStatus, [code])]),
      ),
      securitySchemes,
      schemas: { ErrorBody: errorBodySchema(), Pagination: PaginationResponse },
    },
    paths,
  });
  const components = (document.components ?? {}) as { schemas?: Record<string, JsonSchema>; responses?: Record<string, unknown> };
  const named = nameInlineObjects(components.schemas ?? {}, document.paths as OpenApiDocument['paths']);
  return {
    ...(document as Omit<OpenApiDocument, 'components' | 'paths'>),
    openapi: '3.1.0',
    servers: [{ url: serverUrl }],
    components: {
      responses: components.responses ?? {},
      securitySchemes,
      schemas: named.schemas as OpenApiDocument['components']['schemas'],
    },
    paths: named.paths,
  };
}

/**
 * Names of objects nested in a named schema, by the name they would get from where they sit
 * (`<Schema><Property>`, an array's items singular): the resources clients use by name.
 */
const NESTED_NAMES: Record<string, string> = {
  BookingListBooking: 'BookingSummary',
  BookingCancellation: 'Cancellation',
  BookingParticipant: 'Participant',
  CreateBookingBodyParticipant: 'ParticipantInput',
  SessionListSession: 'Session',
  ConsultationListConsultation: 'ConsultationSummary',
  ConsultationPricing: 'ConsultationPrice',
  SlotsSlot: 'Slot',
  RuleSetAvailabilityRule: 'AvailabilityRule',
  AvailabilityRuleInterval: 'AvailabilityInterval',
  RuleSetMetaData: 'RuleSetOptions',
  CreateRuleSetBodyAvailabilityRule: 'AvailabilityRuleInput',
  AvailabilityRuleInputInterval: 'AvailabilityIntervalInput',
  CreateRuleSetBodyMetaData: 'RuleSetOptionsInput',
  CreateVisibilityRuleSetBodyVisibilityRule: 'VisibilityRuleInput',
  VisibilityRuleSetCreatedVisibilityRule: 'VisibilityRule',
  VisibilityStatusConsultation: 'ConsultationVisibilityStatus',
  CreateProductBodyProperty: 'ProductPropertyInput',
  UpdateProductBodyProperty: 'ProductPropertyInput',
  ProductProperty: 'ProductProperty',
  CategoryProperty: 'CategoryProperty',
  ReviewsByEntityReview: 'Review',
  AuthSessionUser: 'User',
  OwnRelationshipsCustomer: 'RelationshipSummary',
  SellerCustomersCustomer: 'SellerCustomer',
  SellerFollowersFollower: 'SellerFollower',
  SellerFavoritesFavorite: 'SellerFavorite',
  HighValueCustomersCustomer: 'HighValueCustomer',
  BuyerRelationshipsRelationship: 'BuyerRelationship',
  BuyerFollowingFollowing: 'FollowedSeller',
  BuyerSellersCustomer: 'BookedSeller',
  RateLimitStatsDaily: 'RateLimitWindow',
  RateLimitStatsWeekly: 'RateLimitWindow',
  RateLimitStatsMonthly: 'RateLimitWindow',
  TopUpCreatedWallet: 'TopUpWallet',
  JwksDocumentKey: 'Jwk',
  ErrorBodyError: 'FieldError',
  DraftBodyMetaData: 'DraftMetaDataInput',
  UpdateDraftBodyMetaData: 'DraftMetaDataInput',
  VisibilityStatusBodyContext: 'VisibilityContext',
  PayoutStatusHistory: 'PayoutHistoryEntry',
  BookingHoldAdminHistory: 'BookingHoldHistoryEntry',
  ConsultationPendingRevision: 'PendingRevision',
  ConsultationUpdatedPendingRevision: 'PendingRevision',
  PendingRevisionChanges: 'PendingRevisionChanges',
};

const SCHEMA_KEYWORDS_OF_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const;
const pascal = (text: string) => text.replace(/(^|[^A-Za-z0-9]+)([A-Za-z0-9])/g, (_, _sep: string, c: string) => c.toUpperCase());
const singular = (name: string) =>
  name
    .replace(/ies$/, 'y')
    .replace(/(ss)$/, '$1')
    .replace(/([^s])s$/, '$1');

/**
 * Every object schema nested in a named schema or written in an operation (a request body, a
 * success envelope) becomes a named schema of `components.schemas`, referenced with `$ref`: a
 * generator then names its model after the resource (`Slot`, `BookingSummary`), not after the
 * operation and position it was found at. Equal objects share one name; the success envelopes are
 * named after their `data` (`BookingResponse`). The contract is the same: only where a schema is
 * written changes.
 */
function nameInlineObjects(
  schemas: Record<string, JsonSchema>,
  paths: OpenApiDocument['paths'],
): { schemas: Record<string, JsonSchema>; paths: OpenApiDocument['paths'] } {
  const out: Record<string, JsonSchema> = { ...schemas };
  const byShape = new Map<string, string>();
  const name = (schema: JsonSchema, wanted: string): string => {
    const shape = JSON.stringify(schema);
    const known = byShape.get(shape);
    if (known) return known;
    const base = wanted;
    let candidate = base;
    for (let n = 2; candidate in out && JSON.stringify(out[candidate]) !== shape; n += 1) candidate = `${base}${n}`;
    out[candidate] = schema;
    byShape.set(shape, candidate);
    return candidate;
  };
  const isObject = (node: JsonSchema) => node.type === 'object' && typeof node.properties === 'object';
  /** The schema with its nested objects named; `owner` is the name a nested object would take. */
  const walk = (node: unknown, owner: string, root: boolean): unknown => {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return node;
    const schema = { ...(node as JsonSchema) };
    const self = NESTED_NAMES[owner] ?? owner;
    if (schema.properties) {
      schema.properties = Object.fromEntries(
        Object.entries(schema.properties as Record<string, unknown>).map(([key, value]) => [
          key,
          walk(value, `${self}${pascal(key)}`, false),
        ]),
      );
    }
    if (schema.items) schema.items = walk(schema.items, singular(self), false);
    if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
      schema.additionalProperties = walk(schema.additionalProperties, `${self}Value`, false);
    }
    for (const key of SCHEMA_KEYWORDS_OF_LISTS) {
      if (Array.isArray(schema[key])) schema[key] = (schema[key] as unknown[]).map((branch) => walk(branch, self, false));
    }
    if (root || !isObject(schema)) return schema;
    return { $ref: `${COMPONENT_REF}${name(schema, self)}` };
  };
  for (const [key, schema] of Object.entries(schemas)) out[key] = walk(schema, key, true) as JsonSchema;
  for (const [key, schema] of Object.entries(out)) byShape.set(JSON.stringify(schema), byShape.get(JSON.stringify(schema)) ?? key);
  const namedPaths = Object.fromEntries(
    Object.entries(paths).map(([path, operations]) => [
      path,
      Object.fromEntries(
        Object.entries(operations).map(([method, value]) => {
          const op = value as {
            operationId?: string;
            requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
            responses?: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>;
          };
          const inContent = (content: Record<string, { schema?: JsonSchema }> | undefined, owner: (schema: JsonSchema) => string) =>
            content &&
            Object.fromEntries(
              Object.entries(content).map(([type, media]) => [
                type,
                media.schema ? { ...media, schema: walk(media.schema, owner(media.schema), false) } : media,
              ]),
            );
          const envelopeName = (schema: JsonSchema) => {
            const data = (schema.properties as Record<string, JsonSchema> | undefined)?.data;
            const target = typeof data?.$ref === 'string' ? data.$ref.slice(COMPONENT_REF.length) : undefined;
            if (target) return `${target}Response`;
            return schema.properties && !('data' in (schema.properties as object)) ? 'Done' : `${pascal(op.operationId ?? method)}Response`;
          };
          return [
            method,
            {
              ...op,
              ...(op.requestBody
                ? {
                    requestBody: {
                      ...op.requestBody,
                      content: inContent(op.requestBody.content, () => `${pascal(op.operationId ?? method)}Body`),
                    },
                  }
                : {}),
              ...(op.responses
                ? {
                    responses: Object.fromEntries(
                      Object.entries(op.responses).map(([status, response]) => [
                        status,
                        response.content ? { ...response, content: inContent(response.content, envelopeName) } : response,
                      ]),
                    ),
                  }
                : {}),
            },
          ];
        }),
      ),
    ]),
  );
  return { schemas: out, paths: namedPaths };
}

/**
 * The document with each reference to a named schema (`#/components/schemas/...`) replaced by the
 * schema it names: the same contract, for a reader that walks schemas without resolving `$ref`
 * (the checks of what a request or response schema says). References to shared responses stay.
 */
export function inlineSchemas(document: OpenApiDocument): OpenApiDocument {
  const schemas = document.components.schemas;
  const inline = (node: unknown, trail: readonly string[]): unknown => {
    if (Array.isArray(node)) return node.map((item) => inline(item, trail));
    if (node === null || typeof node !== 'object') return node;
    const { $ref, ...rest } = node as JsonSchema;
    if (typeof $ref === 'string' && $ref.startsWith(COMPONENT_REF)) {
      const name = $ref.slice(COMPONENT_REF.length);
      if (trail.includes(name)) throw new Error(`The schema ${name} refers to itself: it cannot be inlined`);
      const target = schemas[name];
      if (!target) throw new Error(`No component ${$ref}`);
      return inline({ ...target, ...rest }, [...trail, name]);
    }
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inline(value, trail)]));
  };
  return {
    ...document,
    components: { ...document.components, responses: inline(document.components.responses, []) as Record<string, unknown> },
    paths: inline(document.paths, []) as OpenApiDocument['paths'],
  };
}

/** `buildOpenApi` with every named schema inlined (`inlineSchemas`). */
export const buildInlinedOpenApi = (serverUrl = DEFAULT_SERVER_URL): OpenApiDocument => inlineSchemas(buildOpenApi(serverUrl));
