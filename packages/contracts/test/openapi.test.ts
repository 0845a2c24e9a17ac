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
/** A schema, its `$ref` to a named schema followed. */
const resolve = (schema: Json): Json => (typeof schema.$ref === 'string' ? resolve(schemas[schema.$ref.slice(REF.length)]!) : schema);
/** The success body of an operation (the named envelope it refers to). */
const successOf = (endpoint: Endpoint) => resolve(mediaOf((operationOf(endpoint).responses as Json)['200']));

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
        const body = successOf(endpoint);
        const data =
          endpoint.produces === 'jwks'
            ? mediaOf((operationOf(endpoint).responses as Json)['200'])
            : ((body.properties as Json).data as Json);
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
        'ApprovalQueue',
        'ApprovalQueueCounts',
        'ApprovalQueueItem',
        'ApprovalQueueKind',
        'ApprovalQueueResponse',
        'ApproveConsultationBody',
        'AuditAction',
        'AuditEntry',
        'AuditLog',
        'AuditLogResponse',
        'AuditTargetType',
        'AuthSession',
        'AuthSessionResponse',
        'AuthUser',
        'AuthUserResponse',
        'AvailabilityInterval',
        'AvailabilityIntervalInput',
        'AvailabilityRule',
        'AvailabilityRuleInput',
        'Bank',
        'Banks',
        'BanksResponse',
        'BookedSeller',
        'Booking',
        'BookingCancelled',
        'BookingCancelledResponse',
        'BookingHoldAdmin',
        'BookingHoldAdminDispute',
        'BookingHoldAdminResponse',
        'BookingHoldHistoryEntry',
        'BookingHoldStatus',
        'BookingList',
        'BookingListResponse',
        'BookingPaymentState',
        'BookingReceipt',
        'BookingReceiptCoupon',
        'BookingReceiptRefund',
        'BookingReceiptResponse',
        'BookingResponse',
        'BookingStatus',
        'BookingSummary',
        'BuyerFollowing',
        'BuyerFollowingResponse',
        'BuyerRelationship',
        'BuyerRelationships',
        'BuyerRelationshipsResponse',
        'BuyerSellers',
        'BuyerSellersResponse',
        'CancelBookingBody',
        'CancelPayoutBody',
        'Cancellation',
        'Categories',
        'CategoriesResponse',
        'Category',
        'CategoryProperty',
        'CheckoutForm',
        'Consultation',
        'ConsultationApproved',
        'ConsultationApprovedResponse',
        'ConsultationCreated',
        'ConsultationCreatedResponse',
        'ConsultationList',
        'ConsultationListResponse',
        'ConsultationPrice',
        'ConsultationResponse',
        'ConsultationStatus',
        'ConsultationSummary',
        'ConsultationUpdated',
        'ConsultationUpdatedResponse',
        'ConsultationVisibility',
        'ConsultationVisibilityStatus',
        'CountryCode',
        'CouponQuote',
        'CouponQuoteResponse',
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
        'CustomerType',
        'DeliveryMode',
        'DiscountCreated',
        'DiscountCreatedResponse',
        'DiscountType',
        'DisputeNoShowBody',
        'Done',
        'Draft',
        'DraftBody',
        'DraftMetaData',
        'DraftMetaDataInput',
        'DraftResponse',
        'DurationType',
        'Earnings',
        'EarningsByConsultation',
        'EarningsByMonth',
        'EarningsResponse',
        'EarningsTotals',
        'EndSessionBody',
        'ErrorBody',
        'FieldError',
        'FollowStatus',
        'FollowedSeller',
        'HighValueCustomer',
        'HighValueCustomers',
        'HighValueCustomersResponse',
        'HoldQueue',
        'HoldQueueCounts',
        'HoldQueueItem',
        'HoldQueueKind',
        'HoldQueueResponse',
        'HoldSettlement',
        'Jwk',
        'JwksDocument',
        'LedgerEntryType',
        'LoginBody',
        'LogoutBody',
        'LogoutResponse',
        'MyProducts',
        'MyProductsResponse',
        'NoShowBody',
        'NotificationPreference',
        'OwnRelationships',
        'OwnRelationshipsResponse',
        'Pagination',
        'ParticipantInput',
        'PaymentMethod',
        'PayoutCreated',
        'PayoutCreatedResponse',
        'PayoutHistory',
        'PayoutHistoryEntry',
        'PayoutHistoryItem',
        'PayoutHistoryResponse',
        'PayoutMoveBody',
        'PayoutQueue',
        'PayoutQueueCounts',
        'PayoutQueueItem',
        'PayoutQueueItemReviewedBy',
        'PayoutQueueResponse',
        'PayoutQueueState',
        'PayoutState',
        'PayoutStatus',
        'PayoutStatusResponse',
        'PendingRevision',
        'PendingRevisionChanges',
        'PricingCreated',
        'PricingCreatedResponse',
        'PricingStrategy',
        'Product',
        'ProductCreated',
        'ProductCreatedResponse',
        'ProductList',
        'ProductListItem',
        'ProductListResponse',
        'ProductOrDraft',
        'ProductOrDraftResponse',
        'ProductProperty',
        'ProductPropertyInput',
        'ProductSort',
        'ProductVisibility',
        'PropertyType',
        'PropertyValue',
        'PropertyValueInput',
        'RateLimitStats',
        'RateLimitStatsResponse',
        'RateLimitWindow',
        'RefreshBody',
        'RefundStatus',
        'RegisterBody',
        'RegisterRole',
        'Relationship',
        'RelationshipCreated',
        'RelationshipCreatedResponse',
        'RelationshipDeleted',
        'RelationshipDeletedResponse',
        'RelationshipResponse',
        'RelationshipStatus',
        'RelationshipSummary',
        'RelationshipUpdated',
        'RelationshipUpdatedResponse',
        'Review',
        'ReviewCreated',
        'ReviewCreatedResponse',
        'ReviewEntityType',
        'ReviewStatus',
        'ReviewStatusResponse',
        'ReviewUpdated',
        'ReviewUpdatedResponse',
        'ReviewsByEntity',
        'ReviewsByEntityResponse',
        'RuleSet',
        'RuleSetCreated',
        'RuleSetCreatedResponse',
        'RuleSetList',
        'RuleSetListResponse',
        'RuleSetOptions',
        'RuleSetOptionsInput',
        'RuleSetResponse',
        'RuleSetSummary',
        'SellerAnalytics',
        'SellerAnalyticsResponse',
        'SellerCustomer',
        'SellerCustomers',
        'SellerCustomersResponse',
        'SellerFavorite',
        'SellerFavorites',
        'SellerFavoritesResponse',
        'SellerFollower',
        'SellerFollowers',
        'SellerFollowersResponse',
        'Session',
        'SessionDisputed',
        'SessionDisputedResponse',
        'SessionEnded',
        'SessionEndedResponse',
        'SessionList',
        'SessionListResponse',
        'SessionNoShow',
        'SessionNoShowResponse',
        'SessionStarted',
        'SessionStartedResponse',
        'SessionStatus',
        'SessionType',
        'ShippingHandler',
        'Shop',
        'ShopResponse',
        'Slot',
        'Slots',
        'SlotsResponse',
        'StartSessionBody',
        'Statement',
        'StatementEntry',
        'StatementResponse',
        'TopUpCreated',
        'TopUpCreatedResponse',
        'TopUpHistory',
        'TopUpHistoryItem',
        'TopUpHistoryResponse',
        'TopUpReceipt',
        'TopUpReceiptResponse',
        'TopUpState',
        'TopUpStatus',
        'TopUpStatusResponse',
        'TopUpWallet',
        'Transfer',
        'TransferDirection',
        'TransferDirectionFilter',
        'TransferHistory',
        'TransferHistoryItem',
        'TransferHistoryResponse',
        'TransferResponse',
        'TransferStatus',
        'UpdateConsultationBody',
        'UpdateCustomerBody',
        'UpdateDraftBody',
        'UpdateProductBody',
        'UpdateReviewBody',
        'UpholdBookingHoldBody',
        'UserRole',
        'V1Product',
        'V1ProductList',
        'V1ProductListResponse',
        'V1ProductResponse',
        'ValidateCouponBody',
        'VisibilityBody',
        'VisibilityContext',
        'VisibilityRule',
        'VisibilityRuleAction',
        'VisibilityRuleInput',
        'VisibilityRuleSetCreated',
        'VisibilityRuleSetCreatedResponse',
        'VisibilityRuleType',
        'VisibilityStatus',
        'VisibilityStatusBody',
        'VisibilityStatusResponse',
        'VoidBookingHoldBody',
        'Wallet',
        'WalletResponse',
        'Webhook',
        'WebhookResponse',
        'Weekday',
      ].sort(),
    );
  });

  test('the success envelope types `success`; a paged one refers to Pagination', () => {
    const walletOp = ENDPOINTS.find((endpoint) => endpoint.path === '/v1/wallet')!;
    expect(mediaOf((operationOf(walletOp).responses as Json)['200'])).toEqual({ $ref: `${REF}WalletResponse` });
    expect(successOf(walletOp).properties).toMatchObject({ success: { type: 'boolean', const: true }, data: { $ref: `${REF}Wallet` } });
    const paged = ENDPOINTS.filter((endpoint) => endpoint.paged);
    expect(paged.length).toBeGreaterThan(3);
    for (const endpoint of paged) expect((successOf(endpoint).properties as Json).pagination).toEqual({ $ref: `${REF}Pagination` });
  });

  test('each success envelope is named after its data (one per data), and every `success` is a typed true', () => {
    for (const endpoint of ENDPOINTS.filter((candidate) => !candidate.produces)) {
      const ref = mediaOf((operationOf(endpoint).responses as Json)['200']).$ref as string;
      const data = (successOf(endpoint).properties as Json).data as Json | undefined;
      expect(ref).toBe(data?.$ref ? `${data.$ref as string}Response` : endpoint.noData ? `${REF}Done` : ref);
      expect((successOf(endpoint).properties as Json).success).toEqual({ type: 'boolean', const: true });
    }
  });

  test('no object schema is written in place: every one nested in a schema or an operation is named', () => {
    const anonymous: string[] = [];
    const walk = (node: unknown, at: string, root: boolean) => {
      if (Array.isArray(node)) return node.forEach((item, i) => walk(item, `${at}/${i}`, false));
      if (node === null || typeof node !== 'object') return;
      const schema = node as Json;
      if (!root && schema.type === 'object' && schema.properties) anonymous.push(at);
      for (const [name, value] of Object.entries(schema))
        if (!['example', 'examples', 'links'].includes(name)) walk(value, `${at}/${name}`, false);
    };
    for (const [name, schema] of Object.entries(schemas)) walk(schema, name, true);
    walk(document.paths, '#/paths', false);
    expect(anonymous).toEqual([]);
  });

  test('enums are named and referenced, never written out twice; no bare null type', () => {
    const inPlace: string[] = [];
    const nulls: string[] = [];
    const walk = (node: unknown, at: string, root: boolean) => {
      if (Array.isArray(node)) return node.forEach((item, i) => walk(item, `${at}/${i}`, false));
      if (node === null || typeof node !== 'object') return;
      const schema = node as Json;
      if (!root && Array.isArray(schema.enum) && schema.enum.length > 1) inPlace.push(at);
      // A property that can only be null: a type no generator can name (a nullable one, `anyOf`
      // with a null branch, is another thing).
      for (const [name, value] of Object.entries((schema.properties ?? {}) as Record<string, Json>)) {
        if (value === null || typeof value !== 'object') continue;
        const onlyNull =
          value.type === 'null' ||
          (Array.isArray(value.enum) && value.enum.every((item) => item === null)) ||
          ('const' in value && value.const === null);
        if (onlyNull) nulls.push(`${at}/properties/${name}`);
      }
      for (const [name, value] of Object.entries(schema)) if (!['example', 'examples'].includes(name)) walk(value, `${at}/${name}`, false);
    };
    for (const [name, schema] of Object.entries(schemas)) walk(schema, name, true);
    walk(document.paths, '#/paths', false);
    expect(inPlace).toEqual([]);
    expect(nulls).toEqual([]);
    expect(schemas.BookingStatus).toEqual({ type: 'string', enum: ['PaymentPending', 'Confirmed', 'Cancelled', 'Failed'] });
    expect(schemas.SessionStatus).toMatchObject({ type: 'string' });
    expect((resolve(schemas.BookingSummary!).properties as Json).status).toEqual({ $ref: `${REF}BookingStatus` });
    expect((schemas.Booking!.properties as Json).status).toEqual({ $ref: `${REF}BookingStatus` });
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
    expect(mediaOf(topUp.requestBody)).toEqual({
      ...schemas.CreateTopUpBody,
      properties: { ...(schemas.CreateTopUpBody!.properties as Json), paymentMethod: schemas.PaymentMethod },
    });
    expect((topUp.responses as Record<string, Json>)['405']).toEqual({ $ref: '#/components/responses/MethodNotAllowed' });
    expect(inlined.components.schemas).toBe(document.components.schemas);
  });
});

describe('what generators read from the document', () => {
  const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ path, method, operation: operation as Json })),
  );

  test('every entry of the endpoint table declares its own verb-first operationId, unique, and the document carries it', () => {
    const ids = ENDPOINTS.map((endpoint) => endpoint.operationId);
    expect(new Set(ids).size).toBe(ENDPOINTS.length);
    const verbs =
      /^(get|list|create|update|delete|set|cancel|approve|reject|process|complete|fail|pay|return|receive|void|start|end|mark|validate|register|login|logout|refresh|dispute|uphold)([A-Z]|$)/;
    expect(ids.filter((id) => !verbs.test(id))).toEqual([]);
    for (const endpoint of ENDPOINTS) expect(operationOf(endpoint).operationId).toBe(endpoint.operationId);
    expect(operations).toHaveLength(ENDPOINTS.length);
    const expected = {
      'post /wallets/users/{userReferenceId}/topup': 'createTopup',
      'post /wallets/checkout/{walletReferenceId}/pay': 'payCheckout',
      'post /consultations': 'createConsultation',
      'post /consultations/{id}/approve': 'approveConsultation',
      'get /consultations/{id}/slots': 'listSlots',
      'post /consultations/bookings': 'createBooking',
      'get /customers/seller/{sellerId}': 'listSellerCustomers',
    };
    for (const [at, id] of Object.entries(expected)) {
      const [method, path] = at.split(' ');
      expect((document.paths[path!]![method!] as Json).operationId).toBe(id);
    }
  });

  test('links name operations by their operationId', () => {
    const ids = new Set(ENDPOINTS.map((endpoint) => endpoint.operationId));
    const linked = operations.flatMap(({ operation }) =>
      Object.values((operation.responses as Record<string, Json>)['200']?.links ?? {}).map((link) => (link as Json).operationId as string),
    );
    expect(linked.length).toBeGreaterThan(10);
    expect(linked.filter((id) => !ids.has(id))).toEqual([]);
  });

  test('servers: an absolute URL, the public URL the gateway is given', () => {
    expect(document.servers).toEqual([{ url: 'http://localhost:8080' }]);
    expect(buildOpenApi('https://api.marketplace.example').servers).toEqual([{ url: 'https://api.marketplace.example' }]);
  });

  test('a 303 answer documents its body (a short note; the client follows Location)', () => {
    const redirects = operations.filter(({ operation }) => (operation.responses as Record<string, Json>)['303']);
    expect(redirects.map(({ operation }) => operation.operationId).sort()).toEqual(['cancelCheckout', 'payCheckout', 'returnFromCheckout']);
    for (const { operation } of redirects) {
      const seeOther = (operation.responses as Record<string, Json>)['303']!;
      expect(Object.keys(seeOther.content as Json).sort()).toEqual(['text/html', 'text/plain']);
      expect(seeOther.headers).toMatchObject({ Location: { required: true } });
    }
  });

  test('the booking date is one format: a date', () => {
    const date = (schemas.CreateBookingBody!.properties as Record<string, Json>).date!;
    expect(date).toMatchObject({ type: 'string', format: 'date' });
    expect(date.anyOf).toBeUndefined();
    const body = ENDPOINTS.find((endpoint) => endpoint.operationId === 'createBooking')!.body!;
    // The wire still takes a timestamp, read as its day.
    const example = ENDPOINTS.find((endpoint) => endpoint.operationId === 'createBooking')!.example!;
    expect((body.parse({ ...example, date: '2026-11-26T09:00:00.000Z' }) as { date: string }).date).toBe('2026-11-26');
  });

  test('every path parameter and every id a request names says what it takes: a format or pattern, or which id and which reference', () => {
    const vague: string[] = [];
    for (const { path, method, operation } of operations) {
      for (const parameter of (operation.parameters ?? []) as Json[]) {
        if (parameter.in !== 'path') continue;
        const schema = parameter.schema as Json;
        if (!schema.format && !schema.pattern && !schema.description && !parameter.description)
          vague.push(`${method} ${path} ${parameter.name as string}`);
      }
    }
    expect(vague).toEqual([]);
    const booking = schemas.CreateBookingBody!.properties as Record<string, Json>;
    expect(booking.SellerId!.description).toMatch(/user id \(a uuid.*USR reference/);
    expect(booking.consultationId!.description).toMatch(/id \(con_…\) or its referenceId \(MKT-CON-…\)/);
    expect(booking.ruleSetId!.description).toMatch(/id \(a uuid\)/);
    const coupon = schemas.ValidateCouponBody!.properties as Record<string, Json>;
    // A user id or a USR reference: one string whose pattern takes either, not a union of two.
    expect(coupon.userId).toMatchObject({ type: 'string' });
    const pattern = new RegExp(coupon.userId!.pattern as string);
    expect(pattern.test('3f1c2a7e-8d4b-4c1e-9a2f-5b6c7d8e9f01')).toBe(true);
    expect(pattern.test('MKT-USR-7Q2M9XKD')).toBe(true);
    expect(pattern.test('MKT-CON-7Q2M9XKD')).toBe(false);
  });
});
