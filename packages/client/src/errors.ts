/** One offending field or rule of the error envelope: `path` is dotted ('' when not about one field). */
export interface ErrorDetail {
  path: string;
  code: string;
  message: string;
}

/**
 * Every answer of 400 or more (and a success answer that is not the envelope) as one error: the
 * envelope's `message` (as the error's message), its first `errors[].code` as `code` (clients branch on it, never on the
 * message), all of `errors` as `details`, the HTTP `status`, and the gateway's `x-request-id`
 * when it sent one (quote it when asking the operators).
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  /** The first detail's code; `http_<status>` when the body was not the envelope. */
  readonly code: string;
  readonly details: ErrorDetail[];
  readonly requestId: string | undefined;
  /** `METHOD /path` of the call that failed. */
  readonly operation: string;
  /** The body as answered (parsed JSON, or text). */
  readonly body: unknown;

  constructor(init: {
    status: number;
    message: string;
    code: string;
    details: ErrorDetail[];
    requestId?: string;
    operation: string;
    body: unknown;
  }) {
    super(init.message);
    this.status = init.status;
    this.code = init.code;
    this.details = init.details;
    this.requestId = init.requestId;
    this.operation = init.operation;
    this.body = init.body;
  }

  /** `ApiError: POST /consultations/bookings → 422 slot_unavailable: The slot is taken (request …)`. */
  override toString(): string {
    return `${this.name}: ${this.operation} → ${this.status} ${this.code}: ${this.message}${this.requestId ? ` (request ${this.requestId})` : ''}`;
  }

  /** From an answer and its body (already read: openapi-fetch's `error`, or text). */
  static from(response: Response, body: unknown, operation?: string): ApiError {
    const envelope = isEnvelope(body) ? body : undefined;
    const details = envelope?.errors ?? [];
    const text = typeof body === 'string' ? body.slice(0, 200) : undefined;
    return new ApiError({
      status: response.status,
      message: envelope?.message ?? (text || response.statusText || 'Request failed'),
      code: details[0]?.code ?? `http_${response.status}`,
      details,
      requestId: response.headers.get('x-request-id') ?? undefined,
      operation: operation ?? operationOf(response),
      body,
    });
  }
}

function isEnvelope(body: unknown): body is { success: false; message: string; errors: ErrorDetail[] } {
  if (typeof body !== 'object' || body === null) return false;
  const { message, errors } = body as { message?: unknown; errors?: unknown };
  return (
    typeof message === 'string' &&
    Array.isArray(errors) &&
    errors.every((e) => typeof e === 'object' && e !== null && typeof (e as ErrorDetail).code === 'string')
  );
}

function operationOf(response: Response): string {
  try {
    return new URL(response.url).pathname;
  } catch {
    return 'request';
  }
}
