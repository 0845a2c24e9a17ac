import { ErrorCode, errorBody, isRuleIssue, type ErrorBody, type ErrorItem } from '@mkt/contracts/core';
import { ZodError } from 'zod';

/** An error a client may see: a status, a stable code and a message (plus optional field items). */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly items: ErrorItem[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class BadRequest extends AppError {
  constructor(message: string, path = '') {
    super(400, ErrorCode.invalid, message, [{ path, code: ErrorCode.invalid, message }]);
  }
}
/**
 * 422 `invalid`: a field that matches its schema but is not acceptable here, by a rule between
 * fields or against stored records (see contracts `RULE`): `No such category` on `categoryId`.
 */
export class InvalidField extends AppError {
  constructor(message: string, path: string) {
    super(422, ErrorCode.invalid, message, [{ path, code: ErrorCode.invalid, message }]);
  }
}
export class Unauthenticated extends AppError {
  constructor(message = 'Authentication required') {
    super(401, ErrorCode.unauthenticated, message);
  }
}
export class Forbidden extends AppError {
  constructor(message = 'You may not do this') {
    super(403, ErrorCode.forbidden, message);
  }
}
export class NotFound extends AppError {
  constructor(what = 'Resource') {
    super(404, ErrorCode.notFound, `${what} not found`);
  }
}
/** 405: the path is served, the method is not; `Allow` lists the methods that are. */
export class MethodNotAllowed extends AppError {
  constructor(method: string, allowed: string[]) {
    super(405, ErrorCode.methodNotAllowed, `Method ${method} is not allowed here`, [], { Allow: allowed.join(', ') });
  }
}
/**
 * The document an update or read returned, or 404 when it found nothing (the record went away
 * between the read that authorised the change and the write): never a non-null assertion
 * that ends in a 500.
 */
export function foundOr404<T>(doc: T | null | undefined, what = 'Resource'): T {
  if (doc === null || doc === undefined) throw new NotFound(what);
  return doc;
}
export class Conflict extends AppError {
  constructor(message: string, code: string = ErrorCode.conflict) {
    super(409, code, message);
  }
}
export class InvalidState extends AppError {
  constructor(message: string) {
    super(409, ErrorCode.invalidState, message);
  }
}
/** A business rule refused the request (422), e.g. insufficient_funds, slot_unavailable. */
export class RuleViolation extends AppError {
  constructor(code: string, message: string, path = '') {
    super(422, code, message, [{ path, code, message }]);
  }
}
export class PayloadTooLarge extends AppError {
  constructor(maxBytes: number) {
    super(413, ErrorCode.payloadTooLarge, `The request body is larger than ${maxBytes} bytes`);
  }
}
export class RateLimited extends AppError {
  constructor(retryAfterSeconds: number, message = 'Too many requests') {
    super(429, ErrorCode.rateLimited, message, [], { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
  }
}

export interface HttpError {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
  /** True when the cause is ours (5xx) and belongs in the log with its stack. */
  internal: boolean;
}

interface BodyParserError {
  type?: string;
  status?: number;
}

function single(status: number, code: string, message: string, path = ''): HttpError {
  return { status, body: errorBody(message, [{ path, code, message }]), headers: {}, internal: status >= 500 };
}

const joinPath = (path: readonly PropertyKey[]) => path.map(String).join('.');

/** One envelope item per problem: an unknown key is named in its own item's `path`. */
function issueItems(issue: ZodError['issues'][number]): ErrorItem[] {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({ path: joinPath([...issue.path, key]), code: ErrorCode.invalid, message: `Unknown field '${key}'` }));
  }
  return [{ path: joinPath(issue.path), code: ErrorCode.invalid, message: issue.message }];
}

/** Maps anything thrown to the error envelope. Pure: no logging, no I/O. */
export function toHttpError(err: unknown): HttpError {
  if (err instanceof ZodError) {
    const errors = err.issues.flatMap(issueItems);
    // Schema-valid but against a rule only when every issue is one; a malformed part wins (400).
    const status = err.issues.every(isRuleIssue) ? 422 : 400;
    return { status, body: errorBody('Validation failed', errors), headers: {}, internal: false };
  }
  if (err instanceof AppError) {
    const items = err.items.length > 0 ? err.items : [{ path: '', code: err.code, message: err.message }];
    return { status: err.status, body: errorBody(err.message, items), headers: err.headers, internal: err.status >= 500 };
  }
  if (isDuplicateKey(err)) return single(409, ErrorCode.conflict, 'A record with the same unique value exists already');
  if (isDatabaseUnreachable(err)) {
    // Logged as internal (someone should look), answered as what it is: retry shortly.
    return { ...single(503, ErrorCode.unavailable, 'The database is unavailable; try again shortly'), headers: { 'Retry-After': '1' } };
  }
  const parser = (err ?? {}) as BodyParserError;
  switch (parser.type) {
    case 'entity.parse.failed':
      return single(400, ErrorCode.invalid, 'Malformed JSON body');
    case 'entity.too.large':
      return single(413, ErrorCode.payloadTooLarge, 'The request body is too large');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return single(415, ErrorCode.unsupportedMediaType, 'Unsupported content encoding');
    case 'request.aborted':
      return single(400, ErrorCode.invalid, 'The request was aborted');
    default:
      break;
  }
  if (typeof parser.status === 'number' && parser.status >= 400 && parser.status < 500) {
    return single(parser.status, ErrorCode.invalid, 'The request could not be read');
  }
  return single(500, ErrorCode.internal, 'Internal error');
}

// The driver's errors for a database it cannot reach, by name (this module imports no driver).
/** A command never sent: no server to select, the client not connected or closed. */
const NEVER_SENT = new Set(['MongoServerSelectionError', 'MongoNotConnectedError', 'MongoTopologyClosedError']);
/** A command sent whose answer never came (the connection lost, the socket timeout): it may have run. */
const OUTCOME_UNKNOWN = new Set(['MongoNetworkError', 'MongoNetworkTimeoutError']);

/** The database out of reach: the command never sent, or sent and never answered. */
export function isDatabaseUnreachable(err: unknown): boolean {
  return isNeverSent(err) || isOutcomeUnknown(err);
}

/** The command never reached a server: nothing it would write was written. */
export function isNeverSent(err: unknown): boolean {
  return err instanceof Error && NEVER_SENT.has(err.name);
}

/** The command was sent and its answer never came: what it would write may be there. */
export function isOutcomeUnknown(err: unknown): boolean {
  return err instanceof Error && OUTCOME_UNKNOWN.has(err.name);
}

export function isDuplicateKey(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 11000;
}
