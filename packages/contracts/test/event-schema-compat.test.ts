import { z } from 'zod';
import {
  BookingCancelledData,
  EVENT_CONTRACTS,
  compareEventSchemas,
  eventJsonSchema,
  eventJsonSchemas,
  judgeEventContracts,
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
