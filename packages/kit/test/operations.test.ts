import pino from 'pino';
import { z } from 'zod';
import { OPERATIONS, ok } from '@mkt/contracts';
import { createService, handle, mountEndpoints, operationHandlers, type OperationHandlers } from '@mkt/kit/http';
import { someOperationHandlers, type OperationHandler } from '../src/http/operations';
import type { IdempotentRequests } from '@mkt/kit/db';
import { call, listenOnFreePort, makeKeyPair, signTestToken, type Listening } from '@mkt/infra';

const keys = makeKeyPair();
const log = pino({ level: 'silent' });
const NoteParams = z.object({ id: z.string().min(2) }).strict();
const NoteBody = z.object({ note: z.string().min(1) }).strict();
const Note = z.strictObject({ id: z.string(), note: z.string(), by: z.string() });
const NoteList = z.array(Note);
const ListQuery = z.object({ page: z.coerce.number().int().min(1).default(1) }).strict();

/** A table keyed by operationId, as the contracts' `OPERATIONS` is: each entry's literal types kept. */
const TABLE = {
  putNote: {
    operationId: 'putNote',
    method: 'put',
    path: '/notes/{id}',
    service: 'notes',
    access: 'bearer',
    params: NoteParams,
    body: NoteBody,
    data: Note,
  },
  listNotes: {
    operationId: 'listNotes',
    method: 'get',
    path: '/notes',
    service: 'notes',
    access: 'public',
    query: ListQuery,
    data: NoteList,
    paged: true,
  },
  forgetNotes: { operationId: 'forgetNotes', method: 'post', path: '/notes/forget', service: 'notes', access: 'admin', noData: true },
  keepNote: {
    operationId: 'keepNote',
    method: 'post',
    path: '/notes/keep',
    service: 'notes',
    access: 'bearer',
    body: NoteBody,
    data: Note,
    idempotent: true,
  },
  elsewhere: { operationId: 'elsewhere', method: 'get', path: '/elsewhere', service: 'other', access: 'public', data: z.null() },
} as const;

const notes = (): OperationHandlers<typeof TABLE, 'notes'> => ({
  putNote: ({ params, body }, { user }) => ({ data: { id: params.id, note: body.note, by: user.id }, message: 'Kept' }),
  listNotes: ({ query }, { user }) => ({
    data: [{ id: `page-${query.page}`, note: 'hello', by: user?.id ?? 'nobody' }],
    pagination: { page: query.page, limit: 1, total: 1 },
  }),
  forgetNotes: () => ({ message: 'Forgotten' }),
  keepNote: ({ body }, { user, attempt }) => ({ data: { id: attempt.resourceId, note: body.note, by: user.id } }),
});

/**
 * Compile-time checks (tsc -p tsconfig.tests.json): each `@ts-expect-error` line must fail to
 * compile, or the type check fails. Never called.
 */
export function doesNotCompile(requests: IdempotentRequests): unknown[] {
  const { putNote, listNotes, forgetNotes, keepNote } = notes();
  return [
    // A missing handler: every operation of the service needs one.
    // @ts-expect-error keepNote has no handler
    operationHandlers(TABLE, 'notes', { putNote, listNotes, forgetNotes }, { idempotency: { requests } }),
    // A misspelled handler is no operation of the service.
    operationHandlers(
      TABLE,
      'notes',
      {
        putNote,
        listNotes,
        forgetNotes,
        keepNote,
        // @ts-expect-error there is no operation keepNotes
        keepNotes: keepNote,
      },
      { idempotency: { requests } },
    ),
    // A keyed (idempotent) operation needs the service's Idempotency-Key records.
    // @ts-expect-error idempotency is required
    operationHandlers(TABLE, 'notes', { putNote, listNotes, forgetNotes, keepNote }),
    // The body is the entry's schema's type: `note` is a string.
    (
      (): OperationHandler<(typeof TABLE)['putNote']> =>
      ({ params, body }, { user }) => {
        // @ts-expect-error note is a string, not a number
        const note: number = body.note;
        return { data: { id: params.id, note: String(note), by: user.id } };
      }
    )(),
    // A handler written for another body does not fit the entry.
    // @ts-expect-error the entry's body has no `text`
    ((handler: (input: { body: { text: string } }) => never): OperationHandler<(typeof TABLE)['putNote']> => handler)(null!),
    // The answer's data is the response schema's type.
    (
      (): OperationHandler<(typeof TABLE)['putNote']> =>
      // @ts-expect-error `by` is missing from the answer
      ({ params, body }) => ({ data: { id: params.id, note: body.note } })
    )(),
    // A paged entry answers its pagination.
    // @ts-expect-error listNotes is paged: pagination is required
    ((): OperationHandler<(typeof TABLE)['listNotes']> => () => ({ data: [] }))(),
    // A noData entry answers a message, not data.
    // @ts-expect-error forgetNotes answers no data
    ((): OperationHandler<(typeof TABLE)['forgetNotes']> => () => ({ data: { id: 'x' } }))(),
    // The contracts' table types the services' handlers the same way.
    operationHandlers(OPERATIONS, 'review', {
      listReviewsByEntity: ({ query }) => ({ data: { reviews: [], averageRating: 0, totalReviews: 0, pagination: page(query.page) } }),
      createReview: ({ body }) => {
        // @ts-expect-error a review's rating is a number
        const rating: string = body.rating;
        return { data: reviewOf(Number(rating)) };
      },
      getReviewStatus: ({ params }) => ({
        data: { canReview: true, hasReviewed: false, sessionCompleted: true, consultationId: params.id },
      }),
      // @ts-expect-error the answer's isActive is a boolean
      setReviewActive: ({ params, body }) => ({
        data: { reviewId: params.id, referenceId: 'r', isActive: String(body.isActive), updatedAt: '' },
      }),
    }),
    // @ts-expect-error the review service's handlers need setReviewActive
    operationHandlers(OPERATIONS, 'review', {
      listReviewsByEntity: () => ({ data: { reviews: [], averageRating: 0, totalReviews: 0, pagination: page(1) } }),
      createReview: () => ({ data: reviewOf(5) }),
      getReviewStatus: ({ params }) => ({
        data: { canReview: true, hasReviewed: false, sessionCompleted: true, consultationId: params.id },
      }),
    }),
  ];
}

const page = (n: number) => ({ page: n, limit: 1, total: 0 });
const reviewOf = (rating: number) => ({
  reviewId: 'r',
  referenceId: 'r',
  entityType: 'consultation_service' as const,
  entityId: 'c',
  rating,
  comment: '',
  isActive: true,
  createdAt: '',
});

const buyer = signTestToken(keys.privateKey, { id: 'u-buyer', ref: 'MKT-USR-AAAAAAAA', role: 'buyer' });
const admin = signTestToken(keys.privateKey, { id: 'u-admin', ref: 'MKT-USR-BBBBBBBB', role: 'admin' });

/** Idempotency-Key records in memory, with kit's semantics for a sequential caller: the first answer of a key and request again. */
function memoryRequests(): IdempotentRequests {
  const answers = new Map<string, unknown>();
  let next = 0;
  return {
    run: async (scope: string, userId: string, key: string | undefined, request: unknown, operation: (a: object) => Promise<unknown>) => {
      const id = `${userId}:${scope}:${key}:${JSON.stringify(request)}`;
      if (!answers.has(id)) answers.set(id, await operation({ resourceId: `n${++next}`, retaken: false }));
      return answers.get(id);
    },
  } as unknown as IdempotentRequests;
}

let server: Listening;
beforeAll(async () => {
  const app = createService({
    name: 'operations-test',
    log,
    readiness: [],
    routes: (a) =>
      mountEndpoints(a, {
        service: 'notes',
        tables: [Object.values(TABLE)],
        publicKey: keys.publicKey,
        handlers: operationHandlers(TABLE, 'notes', notes(), { idempotency: { requests: memoryRequests() } }),
      }),
  });
  server = await listenOnFreePort(app);
});
afterAll(() => server?.close());

describe('operationHandlers: the entry types and applies, the handler answers', () => {
  test('input parsed by the entry, access from the entry, the answer in the envelope', async () => {
    const put = await call(server.url, 'PUT', '/notes/n1', { token: buyer, body: { note: 'hi' } });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ success: true, message: 'Kept', data: { id: 'n1', note: 'hi', by: 'u-buyer' } });
    expect((await call(server.url, 'PUT', '/notes/n1', { body: { note: 'hi' } })).status).toBe(401);
    expect((await call(server.url, 'PUT', '/notes/n1', { token: buyer, body: { note: 1 } })).status).toBe(400);
  });

  test('a paged entry answers pagination beside data; a noData entry a message; admin access from the entry', async () => {
    const list = await call(server.url, 'GET', '/notes?page=2');
    expect(list.body).toEqual({
      success: true,
      data: [{ id: 'page-2', note: 'hello', by: 'nobody' }],
      pagination: { page: 2, limit: 1, total: 1 },
    });
    expect((await call(server.url, 'POST', '/notes/forget', { token: buyer })).status).toBe(403);
    expect((await call(server.url, 'POST', '/notes/forget', { token: admin })).body).toEqual({ success: true, message: 'Forgotten' });
  });

  test('an idempotent entry runs under the Idempotency-Key records: the same key and request answer the first answer', async () => {
    const keep = (key: string, note: string) =>
      call(server.url, 'POST', '/notes/keep', { token: buyer, headers: { 'idempotency-key': key }, body: { note } });
    const first = await keep('k1', 'a');
    expect(first.body.data.id).toMatch(/^n\d+$/);
    expect((await keep('k1', 'a')).body).toEqual(first.body);
    expect((await keep('k1', 'b')).body.data.id).not.toBe(first.body.data.id);
  });

  test('refused at start: an operation of another service, an idempotent one without key records or answered by a hand-made handler', () => {
    expect(() => operationHandlers(TABLE, 'notes', { ...notes(), elsewhere: () => ({ data: null }) } as never, {} as never)).toThrow(
      /elsewhere is not an operation of notes/,
    );
    // An idempotent entry answered by a hand-made handler: the key would be the handler's to honour.
    const legacy = () =>
      createService({
        name: 'operations-test',
        log,
        readiness: [],
        routes: (a) =>
          mountEndpoints(a, {
            service: 'notes',
            tables: [Object.values(TABLE)],
            publicKey: keys.publicKey,
            handlers: {
              ...operationHandlers(TABLE, 'notes', notes(), { idempotency: { requests: memoryRequests() } }),
              'POST /notes/keep': handle({ body: NoteBody }, (input, _req, res) => res.json(ok(input.body))),
            },
          }),
      });
    expect(legacy).toThrow(/POST \/notes\/keep is idempotent: its handler must come from operationHandlers/);
    const unchecked = someOperationHandlers as (...args: unknown[]) => unknown;
    expect(() => unchecked(TABLE, { keepNote: notes().keepNote })).toThrow(/keepNote is idempotent/);
  });
});
