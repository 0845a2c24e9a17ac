import type { Request, RequestHandler, Response } from 'express';
import type { z } from 'zod';
import { ok, type Pagination } from '@mkt/contracts/core';
import type { Attempt, IdempotentRequests } from '../idempotency';
import { currentUser, type AuthenticatedUser } from './auth';
import { handle, type EndpointHandler, type EndpointKey, type TableEntry } from './endpoints';
import type { RequestSchemas } from './validate';

/**
 * One entry of a table keyed by operationId (the contracts' `OPERATIONS`), as kit reads it: the
 * `TableEntry` that mounts it, and what its answer is.
 */
export interface OperationEntry extends TableEntry {
  operationId: string;
  /** The success envelope's `data`. */
  data?: z.ZodType;
  /** Runs under the service's `Idempotency-Key` records (kit's `IdempotentRequests`). */
  idempotent?: boolean;
  /** The envelope carries `pagination` beside `data`. */
  paged?: boolean;
  /** The answer is `{ success, message }` without `data`. */
  noData?: boolean;
  /** Not the JSON envelope: the handler writes the response itself. */
  produces?: string;
}

/** A table keyed by operationId. */
export type OperationTable = Readonly<Record<string, OperationEntry>>;

type Part = 'params' | 'query' | 'body' | 'form';

/** The parsed parts of a request, typed by the entry's own schemas; a part the entry does not name is absent. */
export type OperationInput<E> = {
  [K in Part as E extends { [P in K]: z.ZodType } ? K : never]: E extends { [P in K]: infer Z extends z.ZodType } ? z.output<Z> : never;
};

/**
 * What a handler answers, as the entry says: `{ data, message? }` with `data` of the entry's
 * response schema (and `pagination` when it is paged), `{ message }` for a `noData` entry, and
 * nothing for an entry that `produces` another format (the handler writes that response).
 */
export type OperationAnswer<E> = E extends { produces: string }
  ? void
  : E extends { noData: true }
    ? { message: string }
    : E extends { data: infer D extends z.ZodType }
      ? { data: z.input<D>; message?: string } & (E extends { paged: true } ? { pagination: Pagination } : { pagination?: never })
      : never;

/** What a handler is given beside its input: the caller (verified when the entry needs a token) and, when keyed, the attempt. */
export interface OperationContext<E> {
  req: Request;
  res: Response;
  /** The verified caller: always there for `bearer` and `admin` entries; for a public one that reads a token, when one was sent. */
  user: E extends { access: 'bearer' | 'admin' } ? AuthenticatedUser : AuthenticatedUser | undefined;
  /** An idempotent entry's attempt: what it creates is named `attempt.resourceId`, the same on every retry of its key. */
  attempt: E extends { idempotent: true } ? Attempt : undefined;
}

export type OperationFn<E> = (input: OperationInput<E>, context: OperationContext<E>) => Promise<OperationAnswer<E>> | OperationAnswer<E>;

/** A handler of an entry: the function, or with handlers of its own that run before the input is parsed (a rate limit). */
export type OperationHandler<E> = OperationFn<E> | { readonly handle: OperationFn<E>; readonly use: readonly RequestHandler[] };

/** The operationIds of `service`'s entries in `T`. */
export type OperationsOf<T, S extends string> = { [K in keyof T]: T[K] extends { service: S } ? K : never }[keyof T];

/** One handler for every entry of `service`: a missing or unknown operationId does not compile. */
export type OperationHandlers<T, S extends string> = { [K in OperationsOf<T, S>]: OperationHandler<T[K]> };

type KeyedOperationsOf<T, K extends keyof T> = { [P in K]: T[P] extends { idempotent: true } ? P : never }[K];

/**
 * The `Idempotency-Key` records of the keyed entries: required when one of the handled entries is
 * `idempotent`. A record is `user:scope:key`, the scope the operationId unless `scopes` names
 * another (the scope a running service's records already carry, so a retry across a release
 * still finds its first answer).
 */
export type IdempotencyOption<K extends PropertyKey> = [K] extends [never]
  ? { idempotency?: undefined }
  : { idempotency: { requests: IdempotentRequests; scopes?: Partial<Record<K, string>> } };

export type OperationOptions<T, K extends keyof T> = IdempotencyOption<KeyedOperationsOf<T, K>>;

/** Handlers for mountEndpoints (`handlers`), keyed `METHOD /path`. */
export type MountedHandlers = Partial<Record<EndpointKey, EndpointHandler>>;

/**
 * Every entry of `service` in `table` answered by its handler, typed from the entry: input from
 * its zod schemas, the answer's `data` from its response schema. Kit applies what the entry
 * says — method, path, access (`mountEndpoints`), and `idempotent`: the handler runs under the
 * `Idempotency-Key` records with kit's one fingerprint (`requestFingerprint` of the parsed input),
 * so the same key and request answer the first answer again and another request under it is 409.
 * Give the result to `mountEndpoints` as its `handlers`.
 */
export function operationHandlers<const T extends OperationTable, const S extends string>(
  table: T,
  service: S,
  handlers: OperationHandlers<T, S>,
  ...options: {} extends OperationOptions<T, OperationsOf<T, S>> // eslint-disable-line @typescript-eslint/no-empty-object-type
    ? [OperationOptions<T, OperationsOf<T, S>>?]
    : [OperationOptions<T, OperationsOf<T, S>>]
): MountedHandlers {
  for (const id of Object.keys(handlers)) {
    if (table[id]?.service !== service) throw new Error(`${id} is not an operation of ${service}`);
  }
  return someOperationHandlers(table, handlers as never, ...(options as [never]));
}

/**
 * Handlers of some operations of `table` (a service that mounts the rest another way): each
 * named operation typed as `operationHandlers` types it; an unknown operationId does not compile,
 * a missing one is refused by `mountEndpoints` at start.
 */
export function someOperationHandlers<const T extends OperationTable, const K extends keyof T & string>(
  table: T,
  handlers: { [P in K]: OperationHandler<T[P]> },
  ...options: {} extends OperationOptions<T, K> ? [OperationOptions<T, K>?] : [OperationOptions<T, K>] // eslint-disable-line @typescript-eslint/no-empty-object-type
): MountedHandlers {
  const idempotency = (options[0] as { idempotency?: { requests: IdempotentRequests; scopes?: Record<string, string> } } | undefined)
    ?.idempotency;
  const mounted: MountedHandlers = {};
  for (const [id, handler] of Object.entries(handlers) as Array<[string, OperationHandler<OperationEntry>]>) {
    const entry = table[id];
    if (!entry) throw new Error(`${id} is no operation of the table`);
    if (entry.idempotent && !idempotency) throw new Error(`${id} is idempotent: give its service's Idempotency-Key records (idempotency)`);
    const fn = typeof handler === 'function' ? handler : handler.handle;
    const use = typeof handler === 'function' ? undefined : handler.use;
    const key = `${entry.method.toUpperCase()} ${entry.path}` as EndpointKey;
    const scope = idempotency?.scopes?.[id] ?? id;
    const answer = answerer(entry, fn, entry.idempotent ? { requests: idempotency!.requests, scope } : undefined);
    mounted[key] = { ...handle(schemasOf(entry), answer, { use }), keyed: Boolean(entry.idempotent) };
  }
  return mounted;
}

const PARTS = ['params', 'query', 'body', 'form'] as const;

/**
 * What an idempotent operation's key is held to: the request's parts as the entry's schemas parse
 * them (`{ params?, query?, body? }`), whose `requestFingerprint` the key's record keeps. The same
 * fields in another order or spelling that parses the same are the same request.
 */
export function operationRequest(
  entry: OperationEntry,
  raw: { params?: unknown; query?: unknown; body?: unknown; form?: unknown },
): object {
  const request: Record<string, unknown> = {};
  for (const part of PARTS)
    if (entry[part]) request[part] = entry[part].parse(raw[part] ?? (part === 'body' || part === 'form' ? {} : undefined));
  return request;
}

function schemasOf(entry: OperationEntry): RequestSchemas {
  const schemas: RequestSchemas = {};
  for (const part of PARTS) if (entry[part]) schemas[part] = entry[part];
  return schemas;
}

type AnyFn = OperationFn<OperationEntry>;

function answerer(
  entry: OperationEntry,
  fn: AnyFn,
  keyed: { requests: IdempotentRequests; scope: string } | undefined,
): (input: object, req: Request, res: Response) => Promise<void> {
  const contextOf = (req: Request, res: Response, attempt?: Attempt) =>
    ({ req, res, user: needsUser(entry) ? currentUser(req) : req.user, attempt }) as OperationContext<OperationEntry>;
  if (entry.produces) {
    return async (input, req, res) => {
      await fn(input as never, contextOf(req, res));
    };
  }
  if (!keyed) {
    return async (input, req, res) => {
      res.json(envelope(entry, await fn(input as never, contextOf(req, res))));
    };
  }
  return async (input, req, res) => {
    const user = currentUser(req);
    // The fingerprint is of the parsed input: the same request however its JSON is spelled.
    const stored = await keyed.requests.run(keyed.scope, user.id, req.header('idempotency-key'), input, async (attempt) => ({
      status: 200,
      body: envelope(entry, await fn(input as never, contextOf(req, res, attempt))),
    }));
    res.status(stored.status).json(stored.body);
  };
}

const needsUser = (entry: OperationEntry) => entry.access === 'bearer' || entry.access === 'admin';

function envelope(entry: OperationEntry, answer: unknown): unknown {
  const { data, message, pagination } = (answer ?? {}) as { data?: unknown; message?: string; pagination?: Pagination };
  if (entry.noData) return { success: true, message };
  return ok(data, message, pagination);
}
