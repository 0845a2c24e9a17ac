import type { z } from 'zod';
import type { ErrorCode } from '../error-codes';

// What every area's table is made of (the entries' type and their builder), apart from the
// tables themselves so an area's entry loads its own table and no other area's schemas.

export type Service = 'gateway' | 'wallet' | 'catalog' | 'crm' | 'consultation' | 'review';
export type Access = 'public' | 'bearer' | 'admin' | 'signature';
/** The error statuses an operation may answer (ADR 0004). */
export type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 422 | 429 | 502 | 503 | 504;

/** One endpoint of the public API: the source of the OpenAPI document and of its tests. */
export interface Endpoint {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  service: Service;
  access: Access;
  /**
   * The operation's name in the OpenAPI document and in every client generated from it: verb
   * first (`createTopup`, `listSlots`), unique, and stable (renaming one breaks clients; the
   * release gate reports it).
   */
  operationId: string;
  summary: string;
  /** The path parameters as the service validates them. */
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  form?: z.ZodType;
  /** A request that succeeds (of `body` or `form`), shown in the document and checked against the schema. */
  example?: Record<string, unknown>;
  /**
   * The success envelope's `data` (strict: a field it does not name is a failure). With
   * `produces: 'jwks'`, the whole body.
   */
  data?: z.ZodType;
  /** Takes an `Idempotency-Key` header: the same key and body answer the first response again. */
  idempotent?: boolean;
  /** The envelope carries `pagination` beside `data`. */
  paged?: boolean;
  /** The success answer is `{ success, message }` without `data`. */
  noData?: boolean;
  /** Answers something other than the JSON envelope (HTML page, redirect, JWKS, CSV file); errors stay the envelope but a page's. */
  produces?: 'html' | 'redirect' | 'jwks' | 'csv';
  /**
   * Operations a success leads on to (OpenAPI links, `method path` → their path parameters read
   * from this answer, e.g. `$response.body#/data/id`): a fuzzer follows them with real records.
   */
  links?: Record<string, Record<string, string>>;
  /**
   * Error answers the rest of the entry does not imply (openapi.ts `errorAnswers` derives the
   * others: 400 from inputs, 401 from access, 404 from a path parameter, 409 from
   * `idempotent`...): a status → the codes it carries (`true`: its usual code), or `false` for a
   * derived one this operation never answers.
   */
  errors?: Partial<Record<ErrorStatus, readonly ErrorCode[] | boolean>>;
}

/** Links from a create to the operations on what it made, the id read at `pointer` of the answer. */
export const linksTo = (pointer: string, param: string, ...targets: string[]) =>
  Object.fromEntries(targets.map((target) => [target, { [param]: `$response.body#${pointer}` }]));

/**
 * An entry with its literal types kept (method, path, service, access, operationId, and the very
 * schemas and flags of `extra`), so the table keyed by operationId (`OPERATIONS`) types each
 * operation's input and answer where kit mounts its handler.
 */
export const e = <
  const M extends Endpoint['method'],
  const P extends string,
  const S extends Service,
  const A extends Access,
  const O extends string,
  const X extends Partial<Endpoint> = {}, // eslint-disable-line @typescript-eslint/no-empty-object-type
>(
  method: M,
  path: P,
  service: S,
  access: A,
  operationId: O,
  summary: string,
  extra: X = {} as X,
): { method: M; path: P; service: S; access: A; operationId: O; summary: string } & X => ({
  method,
  path,
  service,
  access,
  operationId,
  summary,
  ...extra,
});

/** A table keyed by its entries' operationIds, each entry's own (literal) type kept. */
export type KeyedTable<T extends readonly Endpoint[]> = { readonly [E in T[number] as E['operationId']]: E };

export const keyed = <const T extends readonly Endpoint[]>(entries: T): KeyedTable<T> =>
  Object.fromEntries(entries.map((entry) => [entry.operationId, entry])) as KeyedTable<T>;
/** A public read that still verifies a token when one is sent: a token that is not valid is 401. */
export const READS_A_TOKEN = { 401: true } as const;
/** A listing of one user's (the path's): the caller's own, or anyone's for an admin; else 403. */
export const OWN_LISTING = { 403: true } as const;
