import pino from 'pino';
import { z } from 'zod';
import { Router } from 'express';
import { AppError } from '@mkt/kit/domain';
import { createService } from '@mkt/kit/http';
import { withInput, type ValidInput } from '../src/http/validate';
import { call, listenOnFreePort, type Listening } from '@mkt/infra';

const Params = z.object({ id: z.string().regex(/^[a-z]+$/) }).strict();
const Query = z.object({ n: z.coerce.number().int().min(1) }).strict();
const Body = z.object({ amount: z.number().transform((major) => Math.round(major * 100)), note: z.string().trim() }).strict();
const schemas = { params: Params, query: Query, body: Body };

// Compile-time: the input is typed by the schemas' outputs, and parts without a schema are absent.
type Input = ValidInput<typeof schemas>;
const typed: Input = { params: { id: 'a' }, query: { n: 1 }, body: { amount: 1250, note: 'x' } };
// @ts-expect-error a field the contract does not have is a type error
const renamed: number = typed.body.amountMajor;
// @ts-expect-error a part without a schema is not on the input
const noBody: ValidInput<{ params: typeof Params }>['body'] = undefined;

let server: Listening;
const seen: unknown[] = [];
beforeAll(async () => {
  const router = Router({ caseSensitive: true, strict: true });
  router.post(
    '/items/:id',
    withInput(schemas, async (input, _req, res) => {
      seen.push(input);
      res.json({ success: true, data: { id: input.params.id, n: input.query.n, minor: input.body.amount, note: input.body.note } });
    }),
  );
  router.get(
    '/fails/:id',
    withInput({ params: Params }, async (input) => {
      throw new AppError(422, 'refused', `no ${input.params.id}`);
    }),
  );
  router.get(
    '/throws-sync',
    withInput({}, () => {
      throw new AppError(409, 'conflict', 'at once');
    }),
  );
  const app = createService({ name: 'with-input-test', log: pino({ level: 'silent' }), readiness: [], routes: (a) => a.use(router) });
  server = await listenOnFreePort(app);
});
afterAll(() => server.close());

describe('withInput', () => {
  test('the handler gets the parsed, transformed parts', async () => {
    const res = await call(server.url, 'POST', '/items/abc?n=3', { body: { amount: 12.5, note: '  hi ' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: { id: 'abc', n: 3, minor: 1250, note: 'hi' } });
    expect(seen.at(-1)).toEqual({ params: { id: 'abc' }, query: { n: 3 }, body: { amount: 1250, note: 'hi' } });
  });

  test('every invalid part is reported at once and the handler never runs', async () => {
    const before = seen.length;
    const res = await call(server.url, 'POST', '/items/ABC?n=0', { body: { amount: 'x', extra: true } });
    expect(res.status).toBe(400);
    const paths = (res.body as { errors: Array<{ path: string }> }).errors.map((item) => item.path).sort();
    expect(paths).toEqual(['amount', 'extra', 'id', 'n', 'note']);
    expect(seen.length).toBe(before);
  });

  test('a rejected or throwing handler answers through the error middleware', async () => {
    const rejected = await call(server.url, 'GET', '/fails/abc');
    expect(rejected.status).toBe(422);
    expect(rejected.body).toMatchObject({ success: false, errors: [{ code: 'refused', message: 'no abc' }] });
    const thrown = await call(server.url, 'GET', '/throws-sync');
    expect(thrown.status).toBe(409);
  });
});

test('the compile-time checks above are in this file', () => {
  expect(noBody).toBeUndefined();
  expect(renamed).toBeUndefined();
});
