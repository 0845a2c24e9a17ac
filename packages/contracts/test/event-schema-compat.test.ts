import { z } from 'zod';
import {
  BookingCancelledData,
  ENVELOPE_CONTRACT,
  EVENT_CONTRACTS,
  EventEnvelope,
  compareEventSchemas,
  eventEnvelopeJsonSchema,
  eventJsonSchema,
  eventJsonSchemas,
  judgeEventContracts,
  releasedEventContracts,
  type JsonSchema,
} from '@mkt/contracts';

// The event gate's comparator on schemas generated from zod, as `scripts/contracts.mjs check`
// uses it: a change that a consumer on either side of a rolling update could not read is
// refused; a new optional field and documentation are accepted.
const Released = z.object({
  bookingId: z.string().min(1),
  amountMinor: z.number().int().nonnegative(),
  status: z.enum(['paid', 'refunded']),
  note: z.string().optional(),
  buyer: z.object({ id: z.string(), country: z.string().length(2) }),
  items: z.array(z.object({ sku: z.string() })),
});
const released = eventJsonSchema(Released);
const against = (current: z.ZodType) => compareEventSchemas(released, eventJsonSchema(current));
const breaking = (current: z.ZodType) => against(current).filter((c) => c.kind === 'breaking');

describe('compareEventSchemas (refused)', () => {
  test('a removed field', () => {
    expect(breaking(Released.omit({ note: true }))).toEqual([
      { path: '/note', kind: 'breaking', change: 'property removed (was optional)' },
    ]);
  });

  test('a retyped field', () => {
    expect(breaking(Released.extend({ amountMinor: z.string() }))).toEqual([
      expect.objectContaining({ path: '/amountMinor', change: 'type "integer" → "string"' }),
      expect.objectContaining({ path: '/amountMinor', change: expect.stringMatching(/^minimum 0 → \(none\)/) }),
      expect.objectContaining({ path: '/amountMinor', change: expect.stringMatching(/^maximum /) }),
    ]);
  });

  test('a new required field, at the top and deeper', () => {
    expect(breaking(Released.extend({ currency: z.string() }))).toEqual([
      expect.objectContaining({ path: '/currency', change: expect.stringMatching(/^new required property/) }),
    ]);
    const deeper = Released.extend({ items: z.array(z.object({ sku: z.string(), quantity: z.number() })) });
    expect(breaking(deeper)).toEqual([expect.objectContaining({ path: '/items/[]/quantity' })]);
  });

  test('an enum value added or removed (both sides of a rolling update)', () => {
    expect(breaking(Released.extend({ status: z.enum(['paid', 'refunded', 'voided']) }))).toEqual([
      expect.objectContaining({ path: '/status', change: expect.stringMatching(/^enum values added: "voided"/) }),
    ]);
    expect(breaking(Released.extend({ status: z.enum(['paid']) }))).toEqual([
      expect.objectContaining({ path: '/status', change: expect.stringMatching(/^enum values removed: "refunded"/) }),
    ]);
  });

  test('optional → required and required → optional', () => {
    expect(breaking(Released.extend({ note: z.string() }))).toEqual([
      expect.objectContaining({ path: '/note', change: expect.stringMatching(/^optional → required/) }),
    ]);
    expect(breaking(Released.extend({ bookingId: z.string().min(1).optional() }))).toEqual([
      expect.objectContaining({ path: '/bookingId', change: expect.stringMatching(/^required → optional/) }),
    ]);
  });

  test('a changed constraint: length, format, pattern', () => {
    expect(breaking(Released.extend({ bookingId: z.string().min(3) }))).toEqual([
      expect.objectContaining({ path: '/bookingId', change: 'minLength 1 → 3' }),
    ]);
    expect(breaking(Released.extend({ buyer: z.object({ id: z.uuid(), country: z.string().length(2) }) })).map((c) => c.path)).toEqual(
      expect.arrayContaining(['/buyer/id']),
    );
    expect(breaking(Released.extend({ note: z.string().regex(/^x/).optional() }))).toEqual([
      expect.objectContaining({ path: '/note', change: 'pattern (none) → "^x"' }),
    ]);
  });
});

describe('compareEventSchemas: additionalProperties', () => {
  const WithTotals = z.object({ bookingId: z.string(), totals: z.record(z.string(), z.number().int()) });
  const compare = (before: z.ZodType, after: z.ZodType) =>
    compareEventSchemas(eventJsonSchema(before), eventJsonSchema(after)).filter((c) => c.kind === 'breaking');

  test("a record's value type changed is refused (its additionalProperties schema is compared)", () => {
    expect(compare(WithTotals, WithTotals.extend({ totals: z.record(z.string(), z.string()) }))).toEqual([
      expect.objectContaining({ path: '/totals/{*}', change: 'type "integer" → "string"' }),
      expect.objectContaining({ path: '/totals/{*}', change: expect.stringMatching(/^minimum /) }),
      expect.objectContaining({ path: '/totals/{*}', change: expect.stringMatching(/^maximum /) }),
    ]);
    expect(compare(WithTotals, WithTotals)).toEqual([]);
  });

  test('a property added to an object the released schema closes (additionalProperties: false) is refused', () => {
    const Strict = z.strictObject({ bookingId: z.string() });
    expect(compare(Strict, Strict.extend({ note: z.string().optional() }))).toEqual([
      expect.objectContaining({ path: '/note', change: expect.stringMatching(/^property added to an object the released schema closes/) }),
    ]);
  });

  test('additionalProperties changed to or from false is refused', () => {
    const Open = z.object({ bookingId: z.string() });
    expect(compare(Open, z.strictObject({ bookingId: z.string() }))).toEqual([
      expect.objectContaining({ path: '/', change: 'additionalProperties (none) → false' }),
    ]);
    expect(compare(z.strictObject({ bookingId: z.string() }), Open)).toEqual([
      expect.objectContaining({ path: '/', change: 'additionalProperties false → (none)' }),
    ]);
    expect(compare(z.looseObject({ bookingId: z.string() }), Open)).toEqual([]);
  });

  test('a property added beside a released additionalProperties schema must read as that schema', () => {
    const record: JsonSchema = { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } };
    const added = (b: JsonSchema): JsonSchema => ({ ...record, properties: { a: { type: 'string' }, b } });
    expect(compareEventSchemas(record, added({ type: 'number' }))).toEqual([
      expect.objectContaining({ path: '/b', kind: 'breaking', change: expect.stringMatching(/additionalProperties schema/) }),
    ]);
    expect(compareEventSchemas(record, added({ type: 'string' }))).toEqual([
      { path: '/b', kind: 'compatible', change: 'optional property added' },
    ]);
  });
});

describe('the envelope', () => {
  test('is released beside the data schemas, generated the same way', () => {
    const contracts = releasedEventContracts();
    expect(contracts[ENVELOPE_CONTRACT]).toEqual(eventJsonSchema(EventEnvelope));
    expect(Object.keys(contracts)).toHaveLength(Object.keys(eventJsonSchemas()).length + 1);
  });

  test('is compared by the same rules: a removed field is refused, a new optional one accepted', () => {
    const contracts = releasedEventContracts();
    const without = eventJsonSchema(EventEnvelope.omit({ correlationId: true }));
    expect(judgeEventContracts(contracts, { ...contracts, [ENVELOPE_CONTRACT]: without }).breaking).toEqual([
      expect.objectContaining({ contract: ENVELOPE_CONTRACT, path: '/correlationId', change: 'property removed (was required)' }),
    ]);
    const withOptional = eventJsonSchema(EventEnvelope.extend({ tenant: z.string().optional() }));
    expect(judgeEventContracts(contracts, { ...contracts, [ENVELOPE_CONTRACT]: withOptional })).toMatchObject({
      ok: true,
      compatible: [{ contract: ENVELOPE_CONTRACT, path: '/tenant' }],
    });
    const { [ENVELOPE_CONTRACT]: envelope, ...data } = contracts;
    expect(envelope).toEqual(eventEnvelopeJsonSchema());
    expect(judgeEventContracts(contracts, data).breaking).toEqual([
      expect.objectContaining({ contract: ENVELOPE_CONTRACT, change: 'released envelope schema missing' }),
    ]);
  });
});

describe('compareEventSchemas (accepted)', () => {
  test('a new optional field, at the top and deeper, and a description', () => {
    const current = Released.extend({
      cause: z.string().max(40).optional().describe('why'),
      buyer: z.object({ id: z.string(), country: z.string().length(2), city: z.string().optional() }),
      bookingId: z.string().min(1).describe('the booking'),
    });
    expect(against(current)).toEqual([
      { path: '/buyer/city', kind: 'compatible', change: 'optional property added' },
      { path: '/cause', kind: 'compatible', change: 'optional property added' },
    ]);
  });

  test('the same schema: nothing', () => {
    expect(against(Released)).toEqual([]);
  });
});

describe('judgeEventContracts', () => {
  const schemas = eventJsonSchemas();

  test('the platform as it is reads itself', () => {
    expect(judgeEventContracts(schemas, schemas)).toEqual({ ok: true, breaking: [], compatible: [], added: [] });
    expect(Object.keys(schemas)).toHaveLength(Object.keys(EVENT_CONTRACTS).length);
  });

  test('a removed type@version is refused, a new one is additive', () => {
    const { 'consultation.booking.cancelled@1': cancelled, ...rest } = schemas;
    expect(cancelled).toBeDefined();
    const v2: JsonSchema = eventJsonSchema(BookingCancelledData.extend({ cause: z.enum(['session_expired', 'voided_by_admin']) }));
    const verdict = judgeEventContracts(schemas, { ...rest, 'consultation.booking.cancelled@2': v2 });
    expect(verdict.ok).toBe(false);
    expect(verdict.breaking).toEqual([
      expect.objectContaining({ contract: 'consultation.booking.cancelled@1', change: expect.stringMatching(/removed/) }),
    ]);
    expect(verdict.added).toEqual(['consultation.booking.cancelled@2']);
  });

  test('a changed released contract is refused; a new optional field passes', () => {
    const narrowed = eventJsonSchema(BookingCancelledData.extend({ cancelledBy: z.enum(['buyer', 'seller']).optional() }));
    const widened = eventJsonSchema(BookingCancelledData.extend({ reason: z.string().optional() }));
    expect(judgeEventContracts(schemas, { ...schemas, 'consultation.booking.cancelled@1': narrowed }).breaking).toEqual([
      expect.objectContaining({ contract: 'consultation.booking.cancelled@1', path: '/cancelledBy' }),
    ]);
    const ok = judgeEventContracts(schemas, { ...schemas, 'consultation.booking.cancelled@1': widened });
    expect(ok).toMatchObject({ ok: true, compatible: [{ contract: 'consultation.booking.cancelled@1', path: '/reason' }] });
  });
});
