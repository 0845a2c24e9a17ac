import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { paths } from './generated/openapi';
import { IDEMPOTENT_OPERATIONS } from './generated/operations';
import { ApiError } from './errors';
import { accessTokenExpired, type Tokens } from './tokens';
import { anySignal, randomUuid, RETRY_DEFAULTS, sendWithRetries, type RetryOptions } from './retry';

/** The API's paths, as generated from its OpenAPI document. */
export type Paths = paths;
type Method = 'get' | 'put' | 'post' | 'patch' | 'delete';
/** Paths that have an operation of `method`. */
export type PathsOf<M extends Method> = { [P in keyof paths]: paths[P] extends { [K in M]: object } ? P : never }[keyof paths];
type Operation<P extends keyof paths, M extends Method> = paths[P] extends { [K in M]: infer O } ? O : never;
/** The JSON body an operation takes. */
export type RequestBody<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
/** The success envelope an operation answers (its 200 JSON). */
export type SuccessBody<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { responses: { 200: { content: { 'application/json': infer R } } } } ? R : never;
/** The `data` of an operation's success envelope. */
export type ResponseData<P extends keyof paths, M extends Method> = SuccessBody<P, M> extends { data: infer D } ? D : never;
/**
 * The record type of a listing's pages (`GET` of `P`): the elements of its `data` when that is an
 * array, else of `data`'s array fields (`customers`, `bookings`...).
 */
export type ItemOf<P extends keyof paths> = ElementsOf<NonNullable<ResponseData<P, 'get'>>>;
type ElementsOf<D> = D extends readonly (infer E)[]
  ? E
  : D extends object
    ? { [K in keyof D]-?: NonNullable<D[K]> extends readonly (infer E)[] ? E : never }[keyof D]
    : unknown;
/** The parameters (path, query, header) an operation takes. */
export type Parameters<P extends keyof paths, M extends Method> = Operation<P, M> extends { parameters: infer X } ? X : never;

/** What sign in, register and refresh answer: the user and a fresh token pair. */
export type AuthSession = ResponseData<'/v1/auth/login', 'post'>;
export type RegisterBody = RequestBody<'/v1/auth/register', 'post'>;
export type AuditEntry = ResponseData<'/v1/admin/audit-log', 'get'>['entries'][number];

export interface MarketplaceClientOptions extends RetryOptions {
  /** The gateway, e.g. `http://localhost:8080` (the document's paths are appended to it). */
  baseUrl: string;
  /** Tokens from an earlier sign-in (e.g. kept by the app); `signIn`/`register` set them too. */
  tokens?: Tokens;
  /**
   * Called with the new pair after every sign-in, registration and refresh (a refresh rotates
   * the refresh token: the old one is spent, keep this one), and with `undefined` after sign-out
   * or a refused refresh.
   */
  onTokens?: (tokens: Tokens | undefined) => void;
  /** The fetch every call goes through (default: the global one). */
  fetch?: (request: Request) => Promise<Response>;
  /**
   * Makes the Idempotency-Key of a call that takes one and was given none, once per call: every
   * retry of the call sends the same key (default: a random UUID).
   */
  idempotencyKey?: () => string;
  /** A time limit for each HTTP exchange, in milliseconds (default: none). */
  timeoutMs?: number;
  /** An access token counts as expired this many seconds before its `exp` (clock skew; default 60). */
  expiryLeewaySeconds?: number;
}

/** The outcome of a sandbox checkout: where the checkout sends the browser, and its `status`. */
export interface CheckoutOutcome {
  status: string | null;
  location: string;
}

/** One page of a listing. */
export interface Page<T> {
  items: T[];
  page: number;
  limit: number;
  /** All the listing's records (the answer's `pagination.total`). */
  total: number;
  /** The whole success envelope of this page. */
  body: unknown;
}

export interface PageOptions<T> {
  /** Records per page (default 100, the API's maximum). */
  limit?: number;
  /** The first page to read (default 1). */
  firstPage?: number;
  /**
   * The records of one page's envelope. Default: `data` when it is an array, else the one array
   * among `data`'s fields (`customers`, `bookings`...).
   */
  items?: (body: never) => T[];
}

/** The HTTP method of each answer, for the error a failed call throws. */
const methods = new WeakMap<Response, string>();
/** The requests of operations that take an Idempotency-Key (carrying one): safe to send again. */
const keyed = new WeakSet<Request>();

/**
 * The marketplace API: `api` is the openapi-fetch client typed by the document (path-keyed:
 * `api.GET('/v1/wallet')`, `api.POST('/consultations/bookings', { body })`), answering
 * `{ data, error, response }`; `ok(call)` turns it into the success envelope or throws
 * `ApiError`. Around every call: the bearer token, a refresh on a 401 of an expired token
 * (once, shared by concurrent calls, the request retried once), an Idempotency-Key where the
 * operation takes one, and retries of the calls safe to repeat (`maxNetworkRetries`: reads, and
 * the keyed operations with the same key) after a network failure, a 409 in progress, a 429 or a 5xx.
 */
export class MarketplaceClient {
  readonly api: Client<paths>;
  readonly baseUrl: string;
  /** The same client without tokens or refreshes: sign in, register, refresh, sign out. */
  readonly #public: Client<paths>;
  readonly #fetch: (request: Request) => Promise<Response>;
  readonly #options: MarketplaceClientOptions;
  #tokens: Tokens | undefined;
  /**
   * Who the tokens are: raised by every sign-in, registration, `setTokens` and sign-out, never by
   * a refresh. A request, a refresh and its retry belong to the session they started in: a
   * refresh that ends after the session changed stores nothing, and a 401 is retried only with
   * the same session's newer pair (never as the user signed in since, never after a sign-out).
   */
  #session = 0;
  #refreshing: { session: number; done: Promise<Tokens | undefined> } | undefined;

  constructor(options: MarketplaceClientOptions) {
    this.#options = options;
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#tokens = options.tokens ? { ...options.tokens } : undefined;
    const base = options.fetch ?? ((request: Request) => fetch(request));
    this.#fetch = async (request) => {
      const timed = options.timeoutMs
        ? new Request(request, { signal: anySignal([request.signal, AbortSignal.timeout(options.timeoutMs)]) })
        : request;
      const response = await base(timed);
      methods.set(response, request.method);
      return response;
    };
    this.#public = createClient<paths>({ baseUrl: this.baseUrl, fetch: this.#fetch });
    const retries = { ...RETRY_DEFAULTS, ...definedOnly(options) };
    this.api = createClient<paths>({
      baseUrl: this.baseUrl,
      // A call's retries belong to the session it started in (never sent as another user).
      fetch: (request) => {
        const session = this.#session;
        const sameSession = () => this.#session === session;
        return sendWithRetries(request, (attempt) => this.#authorized(attempt), retries, keyed.has(request), sameSession);
      },
    });
    this.api.use(this.#idempotency());
  }

  /** The current token pair (after the last sign-in or refresh), if any. */
  get tokens(): Tokens | undefined {
    return this.#tokens ? { ...this.#tokens } : undefined;
  }

  /** Replaces the token pair (`undefined` forgets it); `onTokens` hears of it. */
  setTokens(tokens: Tokens | undefined): void {
    this.#session += 1;
    this.#store(tokens);
  }

  #store(tokens: Tokens | undefined): void {
    this.#tokens = tokens ? { accessToken: tokens.accessToken, refreshToken: tokens.refreshToken } : undefined;
    this.#options.onTokens?.(this.tokens);
  }

  /** Signs in (`POST /v1/auth/login`) and keeps the tokens for the calls that follow. */
  async signIn(email: string, password: string): Promise<AuthSession> {
    const { data } = await this.ok(this.#public.POST('/v1/auth/login', { body: { email, password } }));
    this.setTokens(data);
    return data;
  }

  /** Registers a buyer or a seller (`POST /v1/auth/register`), signed in at once. */
  async register(body: RegisterBody): Promise<AuthSession> {
    const { data } = await this.ok(this.#public.POST('/v1/auth/register', { body }));
    this.setTokens(data);
    return data;
  }

  /** Revokes the refresh token's family (`POST /v1/auth/logout`) and forgets the tokens. */
  async signOut(): Promise<void> {
    const refreshToken = this.#tokens?.refreshToken;
    this.setTokens(undefined);
    if (refreshToken) await this.ok(this.#public.POST('/v1/auth/logout', { body: { refreshToken } }));
  }

  /**
   * Rotates the refresh token now (`POST /v1/auth/refresh`): the answer's pair replaces the old
   * one, which is spent. Concurrent calls share one refresh. A refused refresh forgets the tokens
   * and throws its `ApiError`.
   */
  async refresh(): Promise<Tokens> {
    const tokens = await this.#refreshOnce();
    if (!tokens) throw new Error('No refresh token (sign in first), or the session changed while refreshing');
    return tokens;
  }

  /**
   * The success envelope of a call made with `api`, or its `ApiError` (status ≥ 400, or a
   * network failure as it is).
   */
  async ok<R extends { data?: unknown; error?: unknown; response: Response }>(
    call: Promise<R> | R,
  ): Promise<Exclude<R['data'], undefined>> {
    const result = await call;
    if (result.response.ok && result.error === undefined) return result.data as Exclude<R['data'], undefined>;
    throw ApiError.from(result.response, result.error ?? result.data, describe(result.response));
  }

  /**
   * The pages of a listing (`GET` of a paged path), one request per page, until `total` is
   * reached or a page comes back empty. `params` as for `api.GET` (the path, the query's filters);
   * `page` and `limit` are set here.
   */
  async *pages<P extends PathsOf<'get'>, T = ItemOf<P>>(
    path: P,
    params: Partial<Parameters<P, 'get'>> = {},
    options: PageOptions<T> = {},
  ): AsyncGenerator<Page<T>, void, undefined> {
    const limit = options.limit ?? 100;
    const pick = (options.items as ((body: unknown) => T[]) | undefined) ?? (defaultItems as (body: unknown) => T[]);
    const given = params as { query?: Record<string, unknown> };
    const get = this.api.GET as unknown as (path: string, init: object) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
    for (let page = options.firstPage ?? 1; ; page += 1) {
      const body = await this.ok(get(path, { params: { ...params, query: { ...given.query, page, limit } } }));
      const items = pick(body);
      const pagination = paginationOf(body);
      yield { items, page, limit: pagination?.limit ?? limit, total: pagination?.total ?? items.length, body };
      if (!pagination || items.length === 0 || page * pagination.limit >= pagination.total) return;
    }
  }

  /**
   * Every entry of the audit log the filters match (`GET /v1/admin/audit-log`, admins only),
   * newest first, following `nextCursor` page after page (`limit` per request, default 100).
   */
  async *auditEntries(
    filters: Omit<NonNullable<Parameters<'/v1/admin/audit-log', 'get'>['query']>, 'cursor' | 'limit'> = {},
    limit = 100,
  ): AsyncGenerator<AuditEntry, void, undefined> {
    let cursor: string | undefined;
    do {
      const body = await this.ok(this.api.GET('/v1/admin/audit-log', { params: { query: { ...filters, limit, cursor } } }));
      yield* body.data.entries;
      cursor = body.data.nextCursor ?? undefined;
    } while (cursor);
  }

  /** The audit log's CSV export of the filters (`GET /v1/admin/audit-log/export`, admins only), as text. */
  async exportAuditLog(filters: NonNullable<Parameters<'/v1/admin/audit-log/export', 'get'>['query']> = {}): Promise<string> {
    const { data, error, response } = await this.api.GET('/v1/admin/audit-log/export', { params: { query: filters }, parseAs: 'text' });
    if (!response.ok || data === undefined) throw ApiError.from(response, error, describe(response));
    return data as unknown as string;
  }

  /** Every record of a listing, page after page (see `pages`). */
  async *items<P extends PathsOf<'get'>, T = ItemOf<P>>(
    path: P,
    params: Partial<Parameters<P, 'get'>> = {},
    options: PageOptions<T> = {},
  ): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages(path, params, options)) yield* page.items;
  }

  /**
   * Development only: goes through the sandbox hosted checkout of a top-up as a buyer's browser
   * would — opens the `paymentUrl` its creation answered (the page, on this client's gateway),
   * then submits its Pay (or Cancel) form — and answers where the checkout redirects (303) with
   * the `status` it reports. Any other answer throws `ApiError`.
   */
  async sandboxCheckout(paymentUrl: string, action: 'pay' | 'cancel' = 'pay'): Promise<CheckoutOutcome> {
    const link = new URL(paymentUrl, this.baseUrl);
    const page = await this.#fetch(new Request(`${this.baseUrl}${link.pathname}${link.search}`));
    if (page.status !== 200) throw ApiError.from(page, await bodyOf(page), `GET ${link.pathname}`);
    await page.body?.cancel();
    const answer = await this.#fetch(
      new Request(`${this.baseUrl}${link.pathname}/${action}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: link.searchParams.get('token') ?? '' }).toString(),
      }),
    );
    if (answer.status !== 303) throw ApiError.from(answer, await bodyOf(answer), `POST ${link.pathname}/${action}`);
    await answer.body?.cancel();
    const location = answer.headers.get('location') ?? '';
    return { status: new URL(location, this.baseUrl).searchParams.get('status'), location };
  }

  /** `sandboxCheckout(paymentUrl, 'pay')`, and throws unless the checkout reports `Completed`. */
  async payInSandbox(paymentUrl: string): Promise<CheckoutOutcome> {
    const outcome = await this.sandboxCheckout(paymentUrl, 'pay');
    if (outcome.status !== 'Completed') throw new Error(`the sandbox checkout did not complete the payment: ${outcome.location}`);
    return outcome;
  }

  /** Sends a request with the bearer token; a 401 of an expired token: refresh once, retry once. */
  async #authorized(request: Request): Promise<Response> {
    const sent = this.#tokens?.accessToken;
    if (!sent || request.headers.has('authorization')) return this.#fetch(request);
    const session = this.#session;
    const retry = this.#tokens?.refreshToken ? request.clone() : undefined;
    request.headers.set('authorization', `Bearer ${sent}`);
    const response = await this.#fetch(request);
    if (response.status !== 401 || !retry || !accessTokenExpired(sent, this.#options.expiryLeewaySeconds)) return response;
    const fresh = await this.#refreshAfter(sent, session);
    if (!fresh) return response;
    await response.body?.cancel();
    retry.headers.set('authorization', `Bearer ${fresh.accessToken}`);
    return this.#fetch(retry);
  }

  /**
   * A pair of `session` newer than the access token `sent`: the current one if another call of
   * the session refreshed already; none once the session changed (a sign-in as someone else, a
   * sign-out: the caller answers the original 401 rather than send the request as another user).
   */
  async #refreshAfter(sent: string, session: number): Promise<Tokens | undefined> {
    if (this.#session !== session) return undefined;
    if (this.#tokens && this.#tokens.accessToken !== sent) return this.tokens;
    try {
      const fresh = await this.#refreshOnce();
      return this.#session === session ? fresh : undefined;
    } catch {
      return undefined; // the caller answers the original 401
    }
  }

  /**
   * One refresh at a time per session: a call while one is under way waits for it. Its answer is
   * stored only if the session and the refresh token are still those it started with.
   */
  #refreshOnce(): Promise<Tokens | undefined> {
    const session = this.#session;
    if (this.#refreshing?.session === session) return this.#refreshing.done;
    const refreshToken = this.#tokens?.refreshToken;
    if (!refreshToken) return Promise.resolve(undefined);
    const current = () => this.#session === session && this.#tokens?.refreshToken === refreshToken;
    const done = (async () => {
      const result = await this.#public.POST('/v1/auth/refresh', { body: { refreshToken } });
      if (!result.response.ok) {
        // Spent, revoked or expired: the pair is no use any more (a network failure keeps it).
        if (result.response.status === 401 && current()) this.#store(undefined);
        throw ApiError.from(result.response, result.error, describe(result.response));
      }
      if (!current()) return undefined; // signed in as someone else, or out, meanwhile
      const { data } = result.data as { data: Tokens };
      this.#store(data);
      return this.tokens;
    })().finally(() => {
      if (this.#refreshing?.done === done) this.#refreshing = undefined;
    });
    this.#refreshing = { session, done };
    return done;
  }

  /**
   * Sets an Idempotency-Key on the operations the document says take one, unless given, once per
   * call (the retries send the request as it is then), and marks them safe to retry.
   */
  #idempotency(): Middleware {
    return {
      onRequest: ({ request, schemaPath }) => {
        if (!IDEMPOTENT_OPERATIONS.has(`${request.method} ${schemaPath}`)) return undefined;
        if (!request.headers.has('idempotency-key'))
          request.headers.set('Idempotency-Key', this.#options.idempotencyKey?.() ?? randomUuid());
        keyed.add(request);
        return request;
      },
    };
  }
}

function definedOnly(options: RetryOptions): RetryOptions {
  const { maxNetworkRetries, initialRetryDelayMs, maxRetryDelayMs, maxRetryAfterMs } = options;
  return Object.fromEntries(
    Object.entries({ maxNetworkRetries, initialRetryDelayMs, maxRetryDelayMs, maxRetryAfterMs }).filter(([, v]) => v !== undefined),
  );
}

function describe(response: Response): string {
  let path = '';
  try {
    path = new URL(response.url).pathname;
  } catch {
    path = '(unknown path)';
  }
  return `${methods.get(response) ?? ''} ${path}`.trim();
}

async function bodyOf(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function defaultItems(body: unknown): unknown[] {
  const data = (body as { data?: unknown } | undefined)?.data;
  if (Array.isArray(data)) return data;
  if (data && typeof data === 'object') {
    const arrays = Object.values(data).filter(Array.isArray);
    if (arrays.length === 1) return arrays[0]!;
  }
  throw new Error('a page whose records are not `data` nor its one array: pass options.items');
}

function paginationOf(body: unknown): { page: number; limit: number; total: number } | undefined {
  const envelope = body as { pagination?: unknown; data?: { pagination?: unknown } } | undefined;
  const pagination = (envelope?.pagination ?? envelope?.data?.pagination) as
    { page?: unknown; limit?: unknown; total?: unknown } | undefined;
  if (!pagination || typeof pagination.limit !== 'number' || typeof pagination.total !== 'number') return undefined;
  return pagination as { page: number; limit: number; total: number };
}
