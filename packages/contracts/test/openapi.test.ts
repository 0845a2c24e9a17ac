import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENDPOINTS, buildOpenApi, inlineSchemas, type Endpoint } from '@mkt/contracts';

type Json = Record<string, unknown>;
const REF = '#/components/schemas/';
const document = buildOpenApi();
const schemas = document.components.schemas as Record<string, Json>;
const key = (endpoint: Endpoint) => `${endpoint.method.toUpperCase()} ${endpoint.path}`;
const operationOf = (endpoint: Endpoint) => document.paths[endpoint.path]![endpoint.method] as Json;
const mediaOf = (part: unknown) => Object.values((part as { content: Record<string, { schema: Json }> }).content)[0]!.schema;

/** Every `$ref` to a named schema under `node`. */
function refsIn(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) node.forEach((item) => refsIn(item, found));
  else if (node !== null && typeof node === 'object') {
    for (const [name, value] of Object.entries(node)) {
      if (name === '$ref' && typeof value === 'string' && value.startsWith(REF)) found.add(value.slice(REF.length));
      else refsIn(value, found);
    }
  }
  return found;
}

/** A schema that names no component: an object (or an array of objects) written out in place. */
const anonymousObject = (schema: Json): boolean =>
  schema.$ref === undefined && (schema.type === 'object' || (schema.type === 'array' && anonymousObject(schema.items as Json)));

describe('the OpenAPI document’s named components', () => {
  test('every request body is a named component, referenced with $ref', () => {
    const bodies = ENDPOINTS.filter((endpoint) => endpoint.body ?? endpoint.form);
    expect(bodies.length).toBeGreaterThan(30);
    const unnamed = bodies.filter((endpoint) => !mediaOf(operationOf(endpoint).requestBody).$ref).map(key);
    expect(unnamed).toEqual([]);
  });

  test('every resource answered is a named component: no anonymous object schema as `data`', () => {
    const answered = ENDPOINTS.filter((endpoint) => endpoint.data);
    expect(answered.length).toBeGreaterThan(60);
    const anonymous = answered
      .map((endpoint) => {
        const body = mediaOf((operationOf(endpoint).responses as Json)['200']);
        const data = endpoint.produces === 'jwks' ? body : ((body.properties as Json).data as Json);
        return [key(endpoint), data] as const;
      })
      .filter(([, data]) => anonymousObject(data) || (data.type === 'array' && !(data.items as Json).$ref))
      .map(([name]) => name);
    expect(anonymous).toEqual([]);
    // A list is a named array of a named item.
    expect(schemas.BookingList).toBeDefined();
    expect(refsIn(schemas.Banks)).toEqual(new Set(['Bank']));
  });

  test('every named component is referenced from an operation or a shared response, and every reference resolves', () => {
    const reached = new Set<string>();
    const visit = (name: string) => {
      if (reached.has(name)) return;
      expect(schemas).toHaveProperty(name);
      reached.add(name);
      refsIn(schemas[name]).forEach(visit);
    };
    refsIn(document.paths).forEach(visit);
    refsIn(document.components.responses).forEach(visit);
    expect(Object.keys(schemas).filter((name) => !reached.has(name))).toEqual([]);
  });

  test('names are those of the contract: a rename is a change of every generated client', () => {
    expect(Object.keys(schemas).sort()).toEqual(
      [
        'ApproveConsultationBody',
        'AuthSession',
        'AuthUser',
        'Bank',
        'Banks',
        'Booking',
        'BookingCancelled',
        'BookingHoldAdmin',
        'BookingList',
        'BuyerFollowing',
        'BuyerRelationships',
        'BuyerSellers',
        'CancelBookingBody',
        'CancelPayoutBody',
        'Categories',
        'Category',
        'CheckoutForm',
        'Consultation',
        'ConsultationApproved',
        'ConsultationCreated',
        'ConsultationList',
        'ConsultationUpdated',
        'CouponQuote',
        'CreateBookingBody',
        'CreateConsultationBody',
        'CreateCustomerBody',
        'CreateDiscountBody',
        'CreatePayoutBody',
        'CreatePricingBody',
        'CreateProductBody',
        'CreateReviewBody',
        'CreateRuleSetBody',
        'CreateShopBody',
        'CreateTopUpBody',
        'CreateTransferBody',
        'CreateV1ProductBody',
        'CreateVisibilityRuleSetBody',
        'DiscountCreated',
        'Draft',
        'DraftBody',
        'EndSessionBody',
        'ErrorBody',
        'HighValueCustomers',
        'JwksDocument',
        'LoginBody',
        'LogoutBody',
        'MyProducts',
        'NoShowBody',
        'OwnRelationships',
        'Pagination',
        'PayoutCreated',
        'PayoutMoveBody',
        'PayoutStatus',
        'PricingCreated',
        'Product',
        'ProductCreated',
        'ProductList',
        'ProductListItem',
        'ProductOrDraft',
        'RateLimitStats',
        'RefreshBody',
        'RegisterBody',
        'Relationship',
        'RelationshipCreated',
        'RelationshipDeleted',
        'RelationshipUpdated',
        'ReviewCreated',
        'ReviewStatus',
        'ReviewUpdated',
        'ReviewsByEntity',
        'RuleSet',
        'RuleSetCreated',
        'RuleSetList',
        'RuleSetSummary',
        'SellerAnalytics',
        'SellerCustomers',
        'SellerFavorites',
        'SellerFollowers',
        'SessionEnded',
        'SessionList',
        'SessionNoShow',
        'SessionStarted',
        'Shop',
        'Slots',
        'StartSessionBody',
        'TopUpCreated',
        'TopUpStatus',
        'Transfer',
        'UpdateConsultationBody',
        'UpdateCustomerBody',
        'UpdateDraftBody',
        'UpdateProductBody',
        'UpdateReviewBody',
        'V1Product',
        'V1ProductList',
        'ValidateCouponBody',
        'VisibilityBody',
        'VisibilityRuleSetCreated',
        'VisibilityStatus',
        'VisibilityStatusBody',
        'VoidBookingHoldBody',
        'Wallet',
        'Webhook',
      ].sort(),
    );
  });

  test('the success envelope types `success`; a paged one refers to Pagination', () => {
    const wallet = mediaOf((operationOf(ENDPOINTS.find((endpoint) => endpoint.path === '/v1/wallet')!).responses as Json)['200']);
    expect(wallet.properties).toMatchObject({ success: { type: 'boolean', const: true }, data: { $ref: `${REF}Wallet` } });
    const paged = ENDPOINTS.find((endpoint) => endpoint.paged)!;
    const body = mediaOf((operationOf(paged).responses as Json)['200']);
    expect((body.properties as Json).pagination).toEqual({ $ref: `${REF}Pagination` });
  });
});

describe('constraints from the schemas’ metadata, not from zod’s internals or an error message', () => {
  test('"at least one field" is minProperties on exactly the partial updates', () => {
    const atLeastOne = Object.entries(schemas)
      .filter(([, schema]) => schema.minProperties === 1)
      .map(([name]) => name);
    expect(atLeastOne.sort()).toEqual(['UpdateConsultationBody', 'UpdateCustomerBody', 'UpdateDraftBody', 'UpdateProductBody']);
    const body = ENDPOINTS.find(
      (endpoint) => endpoint.body && mediaOf(operationOf(endpoint).requestBody).$ref === `${REF}UpdateCustomerBody`,
    )!;
    expect(body.body!.safeParse({}).success).toBe(false);
  });

  test('a trimmed required text must hold a non-space character, as its validator says', () => {
    const register = schemas.RegisterBody!.properties as Record<string, Json>;
    expect(register.fullName).toMatchObject({ minLength: 1, pattern: '\\S' });
    const body = ENDPOINTS.find((endpoint) => endpoint.path === '/v1/auth/register')!.body!;
    const valid = { email: 'sara@example.com', password: 'a long password', fullName: 'Sara', role: 'buyer' };
    expect(body.safeParse(valid).success).toBe(true);
    expect(body.safeParse({ ...valid, fullName: '   ' }).success).toBe(false);
    expect(new RegExp(register.fullName!.pattern as string).test('   ')).toBe(false);
  });

  test('no module of the contracts reads zod’s internals', () => {
    const dir = join(__dirname, '..', 'src');
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
    const readers = files.filter((file) => /_zod\b|\.includes\('\.trim\(\)'\)/.test(readFileSync(join(dir, file), 'utf8')));
    expect(readers).toEqual([]);
  });
});

describe('inlineSchemas', () => {
  test('replaces every schema reference by the schema it names, and keeps shared responses referenced', () => {
    const inlined = inlineSchemas(document);
    expect(refsIn(inlined.paths)).toEqual(new Set());
    const topUp = inlined.paths['/wallets/users/{userReferenceId}/topup']!.post as Json;
    expect(mediaOf(topUp.requestBody)).toEqual(schemas.CreateTopUpBody);
    expect((topUp.responses as Record<string, Json>)['405']).toEqual({ $ref: '#/components/responses/MethodNotAllowed' });
    expect(inlined.components.schemas).toBe(document.components.schemas);
  });
});
