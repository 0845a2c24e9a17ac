import { z } from 'zod';
import { ErrorBody } from './envelope';
import { ENDPOINTS, type Endpoint } from './api';

const schema = (type: z.ZodType) => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(type, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
};

function parameters(endpoint: Endpoint) {
  const path = [...endpoint.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  const query = endpoint.query
    ? Object.entries((schema(endpoint.query).properties ?? {}) as Record<string, object>).map(([name, s]) => ({
        name,
        in: 'query',
        required: false,
        schema: s,
      }))
    : [];
  return [...path, ...query];
}

function operation(endpoint: Endpoint) {
  const errors = {
    description: 'The error envelope',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
  };
  const data = endpoint.data ? schema(endpoint.data) : {};
  const ok =
    endpoint.produces === 'html'
      ? { description: 'An HTML page', content: { 'text/html': { schema: { type: 'string' } } } }
      : endpoint.produces === 'redirect'
        ? { description: 'See Other: back to the client’s redirectUrl with status and reference' }
        : endpoint.produces === 'jwks'
          ? { description: 'JSON Web Key Set', content: { 'application/json': { schema: { type: 'object' } } } }
          : {
              description: 'Success',
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['success', 'data'],
                    properties: {
                      success: { const: true },
                      message: { type: 'string' },
                      data,
                      pagination: { $ref: '#/components/schemas/Pagination' },
                    },
                  },
                },
              },
            };
  const body = endpoint.body
    ? { required: true, content: { 'application/json': { schema: schema(endpoint.body) } } }
    : endpoint.form
      ? { required: true, content: { 'application/x-www-form-urlencoded': { schema: schema(endpoint.form) } } }
      : undefined;
  return {
    tags: [endpoint.service],
    summary: endpoint.summary,
    operationId: `${endpoint.method}${endpoint.path.replace(/[^A-Za-z0-9]+(\w)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    ...(endpoint.access === 'bearer' || endpoint.access === 'admin' ? { security: [{ bearer: [] }] } : { security: [] }),
    ...(endpoint.access === 'admin' ? { description: 'Admins only.' } : {}),
    parameters: parameters(endpoint),
    ...(body ? { requestBody: body } : {}),
    responses: { '200': ok, '400': errors, '401': errors, '403': errors, '404': errors, '409': errors, '422': errors, '429': errors },
  };
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
          ...schema(ErrorBody),
          example: {
            success: false,
            message: 'Validation failed',
            errors: [{ path: 'amount', code: 'invalid', message: 'The amount must be greater than zero' }],
          },
        },
        Pagination: { type: 'object', properties: { page: { type: 'integer' }, limit: { type: 'integer' }, total: { type: 'integer' } } },
      },
    },
    paths,
  };
}
