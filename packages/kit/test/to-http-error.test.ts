import { z } from 'zod';
import { breakRule } from '@mkt/contracts';
import {
  type AppError,
  Conflict,
  Forbidden,
  foundOr404,
  InvalidField,
  InvalidState,
  NotFound,
  PayloadTooLarge,
  RateLimited,
  RuleViolation,
  Unauthenticated,
  toHttpError,
} from '@mkt/kit/domain';
import { MethodNotAllowed } from '../src/errors';

describe('toHttpError', () => {
  test('a ZodError becomes 400 with one dotted item per issue', () => {
    const result = z.object({ amount: z.number(), bank: z.object({ code: z.string() }) }).safeParse({ amount: 'x', bank: { code: 1 } });
    const mapped = toHttpError(result.error);
    expect(mapped.status).toBe(400);
    expect(mapped.body.success).toBe(false);
    expect(mapped.body.errors.map((item) => item.path).sort()).toEqual(['amount', 'bank.code']);
    expect(mapped.body.errors.every((item) => item.code === 'invalid')).toBe(true);
  });
  test('an unknown key is named in the path of its own item, nested ones with their parent', () => {
    const Body = z.strictObject({ amount: z.number(), bank: z.strictObject({ code: z.string() }) });
    const result = Body.safeParse({ amount: 1, colour: 'red', admin: true, bank: { code: 'x', iban: 'y' } });
    const mapped = toHttpError(result.error);
    expect(mapped.status).toBe(400);
    expect(mapped.body.errors).toEqual(
      expect.arrayContaining([
        { path: 'colour', code: 'invalid', message: "Unknown field 'colour'" },
        { path: 'admin', code: 'invalid', message: "Unknown field 'admin'" },
        { path: 'bank.iban', code: 'invalid', message: "Unknown field 'iban'" },
      ]),
    );
    expect(mapped.body.errors).toHaveLength(3);
  });
  test('a schema-valid body that breaks only rules between fields is 422; any malformed part makes it 400', () => {
    const Period = z.strictObject({ from: z.number(), to: z.number() }).superRefine((value, ctx) => {
      if (value.to <= value.from) breakRule(ctx, ['to'], 'to must be after from');
    });
    const rule = toHttpError(Period.safeParse({ from: 2, to: 1 }).error);
    expect(rule.status).toBe(422);
    expect(rule.body.errors).toEqual([{ path: 'to', code: 'invalid', message: 'to must be after from' }]);
    const malformed = toHttpError(Period.safeParse({ from: 'x', to: 1 }).error);
    expect(malformed.status).toBe(400);
    const unmarked = z.number().refine((n) => n > 0, 'positive');
    expect(toHttpError(unmarked.safeParse(-1).error).status).toBe(400);
    expect(toHttpError(new InvalidField('No such category', 'categoryId'))).toMatchObject({
      status: 422,
      body: { errors: [{ path: 'categoryId', code: 'invalid', message: 'No such category' }] },
    });
  });
  test.each([
    [new Unauthenticated(), 401, 'unauthenticated'],
    [new Forbidden(), 403, 'forbidden'],
    [new NotFound('Wallet'), 404, 'not_found'],
    [new Conflict('taken'), 409, 'conflict'],
    [new InvalidState('not from Completed'), 409, 'invalid_state'],
    [new RuleViolation('insufficient_funds', 'short'), 422, 'insufficient_funds'],
    [new PayloadTooLarge(10), 413, 'payload_too_large'],
    [new RateLimited(3), 429, 'rate_limited'],
  ] as Array<[AppError, number, string]>)('%s maps to its status and code', (err, status, code) => {
    const mapped = toHttpError(err);
    expect(mapped.status).toBe(status);
    expect(mapped.body.errors[0]).toMatchObject({ code });
    expect(mapped.body.message).toBe(err.message);
  });
  test('method not allowed is 405 method_not_allowed with Allow', () => {
    const mapped = toHttpError(new MethodNotAllowed('PUT', ['GET', 'HEAD']));
    expect(mapped).toMatchObject({ status: 405, headers: { Allow: 'GET, HEAD' }, internal: false });
    expect(mapped.body.errors).toEqual([{ path: '', code: 'method_not_allowed', message: 'Method PUT is not allowed here' }]);
  });
  test('foundOr404 passes a document through and turns nothing into a 404', () => {
    const doc = { id: 'x' };
    expect(foundOr404(doc, 'Review')).toBe(doc);
    for (const nothing of [null, undefined]) {
      let thrown: unknown;
      try {
        foundOr404(nothing, 'Review');
      } catch (err) {
        thrown = err;
      }
      expect(toHttpError(thrown)).toMatchObject({ status: 404, body: { message: 'Review not found' } });
    }
  });
  test('rate limited carries Retry-After', () => {
    expect(toHttpError(new RateLimited(2.2)).headers['Retry-After']).toBe('3');
  });
  test('a duplicate key becomes 409 conflict', () => {
    expect(toHttpError(Object.assign(new Error('E11000'), { code: 11000 }))).toMatchObject({
      status: 409,
      body: { errors: [{ code: 'conflict' }] },
    });
  });
  test('body parser failures become 400, 413 and 415', () => {
    expect(toHttpError({ type: 'entity.parse.failed', status: 400 }).status).toBe(400);
    expect(toHttpError({ type: 'entity.too.large', status: 413 }).status).toBe(413);
    expect(toHttpError({ type: 'encoding.unsupported', status: 415 }).status).toBe(415);
  });
  test('a database the driver cannot reach is 503 unavailable with Retry-After, telling nothing of the server', () => {
    const err = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:27017'), { name: 'MongoServerSelectionError' });
    const mapped = toHttpError(err);
    expect(mapped).toMatchObject({
      status: 503,
      internal: true,
      headers: { 'Retry-After': '1' },
      body: { errors: [{ code: 'unavailable' }] },
    });
    expect(JSON.stringify(mapped.body)).not.toContain('27017');
    expect(toHttpError(Object.assign(new Error('x'), { name: 'MongoNetworkError' })).status).toBe(503);
  });
  test('anything else is a 500 that tells the client nothing', () => {
    const mapped = toHttpError(new Error('secret connection string mongodb://user:pw@host'));
    expect(mapped).toMatchObject({ status: 500, internal: true, body: { message: 'Internal error', errors: [{ code: 'internal' }] } });
    expect(JSON.stringify(mapped.body)).not.toContain('mongodb');
    expect(toHttpError(undefined).status).toBe(500);
  });
});
