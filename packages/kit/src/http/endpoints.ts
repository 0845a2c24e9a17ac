import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { z } from 'zod';
import { MethodNotAllowed } from '../errors';
import { authenticate, authenticateOptional, requireRole, requireServiceToken, type TokenKeys } from './auth';
import { RouteTable, expressPath, type TableMethod } from './route-table';
import { withInput, type RequestSchemas, type ValidInput } from './validate';

/** Who may call an entry: the contracts' access, and `service` for the internal table. */
export type EntryAccess = 'public' | 'bearer' | 'admin' | 'signature' | 'service';

/**
 * One entry of an endpoint table, as the kit reads it: the contracts' `Endpoint`
 * (`ENDPOINTS`) and `InternalEndpoint` (`INTERNAL_ENDPOINTS`) both have this shape.
 */
export interface TableEntry {
  method: TableMethod;
  /** Parameters written `{name}`; matched case-sensitively and strictly (a trailing `/` counts). */
  path: string;
  service: string;
  access: EntryAccess;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  form?: z.ZodType;
  /** A public entry whose errors name 401 reads a token when one is sent (a bad one is 401). */
  errors?: Partial<Record<number, unknown>>;
  /** Takes an `Idempotency-Key`: its handler must come from `operationHandlers`, which applies it. */
  idempotent?: boolean;
}

/**
 * What answers one entry: the schemas it reads (the entry's own objects, which give `input` its
 * types; `mountEndpoints` refuses any other) and the function. `use` runs after the entry's
 * access check and before the input is parsed (a rate limit of its own).
 */
export interface EndpointHandler<S extends RequestSchemas = RequestSchemas> {
  readonly schemas: S;
  readonly handle: (input: ValidInput<S>, req: Request, res: Response) => unknown;
  readonly use?: readonly RequestHandler[];
  /** Runs under the `Idempotency-Key` records (made by `operationHandlers` for an idempotent entry). */
  readonly keyed?: boolean;
}

/**
 * A handler for an entry: `handle({ params: ReviewParams, body: UpdateReviewBody }, async (input, req, res) => ...)`.
 * Name the parts the entry names, with the entry's schemas (imported from `@mkt/contracts`).
 */
export function handle<S extends RequestSchemas>(
  schemas: S,
  fn: (input: ValidInput<S>, req: Request, res: Response) => unknown,
  options: { use?: readonly RequestHandler[] } = {},
): EndpointHandler<S> {
  return { schemas, handle: fn, use: options.use };
}

/** `'POST /reviews'`: the method in upper case and the path exactly as the table writes it. */
export type EndpointKey = `${'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'} /${string}`;

export interface MountOptions {
  /** The service whose entries these are: every entry of it needs a handler. */
  service: string;
  // Each handler is checked against its entry at mount; its own type is the entry's schemas.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  handlers: Partial<Record<EndpointKey, EndpointHandler<any>>>;
  /**
   * The tables to mount from: the service's area entry's (`ENDPOINTS` of `@mkt/contracts/<area>`,
   * and the wallet's `INTERNAL_ENDPOINTS`). Given, never defaulted to the whole table, so a
   * service loads no other area's schemas.
   */
  tables: ReadonlyArray<readonly TableEntry[]>;
  /**
   * Verifies bearer tokens (a PEM, or the key set by `kid`: `runtime.accessKeys`): needed when an
   * entry is `bearer`, `admin` or reads a token.
   */
  publicKey?: TokenKeys;
  /** The shared credential of `service` entries (`x-internal-token`); empty refuses every call. */
  serviceToken?: string;
  /**
   * Path prefixes behind a token as a whole (`/reviews`): a request under one that no entry
   * answers needs a valid token before it hears 404 or 405, so the paths and methods there are
   * not told to strangers (as a router-wide `use(authenticate)` did). Matched as the routes are:
   * case-sensitive; another spelling reaches no entry anyway (404).
   */
  guardedPrefixes?: readonly string[];
  /**
   * Entries that also answer in the other spelling of their final slash (`/customers` and
   * `/customers/`): for routes that answered both before they came from the table (express's
   * `{/}`, a mounted router's root). Everything else is strict.
   */
  optionalTrailingSlash?: readonly EndpointKey[];
  /** Body limits of form posts and signed (raw) bodies; JSON bodies take the service's. */
  formLimit?: string;
  rawLimit?: string;
}

interface Mounted {
  service: string;
  key: string;
  chain: RequestHandler[];
  /** The other spelling of an `optionalTrailingSlash` entry (not an entry of its own). */
  alias: boolean;
  /** A route of the app outside the tables (`mountRoute`: health, metrics, the gateway's docs). */
  local?: boolean;
}

interface AppRoutes {
  table: RouteTable<Mounted>;
  json: RequestHandler;
  guards: Array<{ prefix: string; auth: RequestHandler }>;
}

const appRoutes = new WeakMap<Express, AppRoutes>();

/**
 * The endpoint dispatcher of an app (`createService` puts it before the body parser): a request
 * whose path an entry serves never reaches express's router.
 * - An entry serves the method: its body parser, access check, `use`, input, handler.
 * - OPTIONS: 204 with `Allow` of the path's owners.
 * - A method the owners do not serve: 405 with `Allow`; where the path is under a guarded
 *   prefix, after the token is checked (unless a parameter route serves the method: a literal
 *   path's methods are its own, told before any check).
 * - No entry matches: under a guarded prefix the token is checked; then on to the rest of the
 *   app (404).
 */
export function endpointDispatcher(app: Express, jsonParser: RequestHandler): RequestHandler {
  const routes: AppRoutes = { table: new RouteTable(), json: jsonParser, guards: [] };
  appRoutes.set(app, routes);
  return (req, res, next) => {
    const found = routes.table.lookup(req.method, req.path);
    if (found.kind === 'none') return guard(routes, req, res, next);
    if (found.kind === 'found') {
      req.params = found.params;
      // The route's label for the duration metric (create-service's trackRouteLabel).
      (req as { route?: unknown }).route = { path: expressPath(found.route.path.template) };
      return run(found.route.value.chain, req, res, next);
    }
    if (req.method === 'OPTIONS') {
      res.set('Allow', found.allow.join(', ')).status(204).end();
      return;
    }
    const refusal = new MethodNotAllowed(req.method, found.allow);
    if (found.takenByParameter) return next(refusal);
    guard(routes, req, res, (err?: unknown) => next(err ?? refusal));
  };
}

function guard(routes: AppRoutes, req: Request, res: Response, next: NextFunction): void {
  const hit = routes.guards.find(({ prefix }) => req.path === prefix || req.path.startsWith(`${prefix}/`));
  if (!hit) return next();
  run([hit.auth], req, res, next);
}

/** Runs handlers in order, as a router would: an error (thrown or passed) goes to `done`. */
function run(chain: readonly RequestHandler[], req: Request, res: Response, done: NextFunction): void {
  const step = (index: number, err?: unknown): void => {
    // `next('route')`: this route is not the one (as in express) — on to the rest of the app, never
    // on into the handler.
    if (err === 'route') return done();
    if (err !== undefined && err !== null) return done(err);
    if (index === chain.length) return done();
    try {
      chain[index]!(req, res, (next?: unknown) => step(index + 1, next));
    } catch (thrown) {
      done(thrown);
    }
  };
  step(0);
}

const PARTS = ['params', 'query', 'body', 'form'] as const;
const keyOf = (entry: Pick<TableEntry, 'method' | 'path'>) => `${entry.method.toUpperCase()} ${entry.path}`;

/**
 * Mounts a service's handlers against its entries of the endpoint tables: the route, body
 * parser, access check and input validation all come from the entry, so a route exists once
 * (in the contracts). Throws, before the app answers anything, when a handler has no entry of
 * the service, an entry of the service has no handler, a handler names a schema the entry does
 * not (another object than the entry's), or a credential the entries need is missing.
 *
 * Access: `public` (a token is read when the entry's errors name 401), `bearer`
 * (`authenticate`), `admin` (`authenticate` + the admin role, before the input is read),
 * `signature` (the raw body, checked by the handler), `service` (`x-internal-token`).
 */
export function mountEndpoints(app: Express, options: MountOptions): void {
  const routes = appRoutes.get(app);
  if (!routes) throw new Error('mountEndpoints needs an app made by createService');
  const entries = options.tables.flat().filter((entry) => entry.service === options.service);
  const problems: string[] = [];
  const handlers = new Map(Object.entries(options.handlers) as Array<[string, EndpointHandler | undefined]>);
  for (const key of handlers.keys()) {
    if (!entries.some((entry) => keyOf(entry) === key)) problems.push(`${key} has a handler but no entry of ${options.service}`);
  }
  for (const key of options.optionalTrailingSlash ?? []) {
    if (!entries.some((entry) => keyOf(entry) === key))
      problems.push(`${key} has an optional trailing slash but no entry of ${options.service}`);
  }
  for (const entry of entries) {
    const handler = handlers.get(keyOf(entry));
    if (!handler) {
      problems.push(`${keyOf(entry)} is an entry of ${options.service} without a handler`);
      continue;
    }
    if (entry.idempotent && !handler.keyed)
      problems.push(`${keyOf(entry)} is idempotent: its handler must come from operationHandlers, which applies the Idempotency-Key`);
    for (const part of PARTS) {
      if (entry[part] && handler.schemas[part] !== entry[part])
        problems.push(`${keyOf(entry)}: its handler must read ${part} with the entry's schema`);
      if (!entry[part] && part !== 'query' && handler.schemas[part])
        problems.push(`${keyOf(entry)}: its handler reads ${part}, which the entry does not name`);
    }
  }
  if (problems.length > 0) throw new Error(`The ${options.service} endpoints do not match the table:\n- ${problems.join('\n- ')}`);

  const needsKey = entries.some((entry) => entry.access === 'bearer' || entry.access === 'admin' || readsToken(entry));
  if ((needsKey || options.guardedPrefixes?.length) && !options.publicKey)
    throw new Error(`The ${options.service} endpoints need publicKey to verify tokens (configure JWT_JWKS_URL or JWT_PUBLIC_KEY)`);
  if (entries.some((entry) => entry.access === 'service') && options.serviceToken === undefined)
    throw new Error(`The ${options.service} endpoints need serviceToken for their internal entries`);

  const access = accessChecks(options);
  const form = express.urlencoded({ extended: false, limit: options.formLimit ?? '8kb' });
  const raw = express.raw({ type: () => true, limit: options.rawLimit ?? '256kb' });
  for (const entry of entries) {
    const handler = handlers.get(keyOf(entry))!;
    const parser = entry.form ? form : entry.access === 'signature' ? raw : routes.json;
    const chain = [parser, ...access(entry), ...(handler.use ?? []), inputThen(entry, handler)];
    routes.table.add(entry.method, entry.path, { service: options.service, key: keyOf(entry), chain, alias: false });
    if (options.optionalTrailingSlash?.includes(keyOf(entry) as EndpointKey)) {
      const other = entry.path.endsWith('/') ? entry.path.slice(0, -1) : `${entry.path}/`;
      routes.table.add(entry.method, other, { service: options.service, key: keyOf(entry), chain, alias: true });
    }
  }
  for (const prefix of options.guardedPrefixes ?? []) {
    routes.guards.push({ prefix: prefix.replace(/\/+$/, ''), auth: authenticate(options.publicKey!) });
  }
}

const readsToken = (entry: TableEntry) => entry.access === 'public' && Boolean(entry.errors?.[401]);

function accessChecks(options: MountOptions): (entry: TableEntry) => RequestHandler[] {
  const key: TokenKeys = options.publicKey ?? '';
  const bearer = authenticate(key);
  const optional = authenticateOptional(key);
  const admin = requireRole('admin');
  const service = requireServiceToken(options.serviceToken ?? '');
  return (entry) => {
    switch (entry.access) {
      case 'bearer':
        return [bearer];
      case 'admin':
        return [bearer, admin];
      case 'service':
        return [service];
      case 'public':
        return readsToken(entry) ? [optional] : [];
      case 'signature':
        return [];
    }
  };
}

function inputThen(entry: TableEntry, handler: EndpointHandler): RequestHandler {
  // The entry's schemas (a handler's extra query schema where the entry names none).
  const schemas: RequestSchemas = { ...handler.schemas, ...pick(entry) };
  return withInput(schemas, (input, req, res) => handler.handle(input, req, res));
}

function pick(entry: TableEntry): RequestSchemas {
  const schemas: RequestSchemas = {};
  for (const part of PARTS) if (entry[part]) schemas[part] = entry[part];
  return schemas;
}

/**
 * A route of the app that is no entry of the endpoint tables — `/healthz`, `/readyz`, `/metrics`,
 * the gateway's `/openapi.json` and `/docs` — on the same matcher as the entries, so it gets the
 * same case-sensitive, strict matching, 405 with `Allow` and OPTIONS. The service's JSON parser,
 * then the handlers: no access check or input schema of a table entry.
 */
export function mountRoute(app: Express, method: TableMethod, path: string, ...handlers: RequestHandler[]): void {
  const routes = appRoutes.get(app);
  if (!routes) throw new Error('mountRoute needs an app made by createService');
  const key = `${method.toUpperCase()} ${path}`;
  // A handler's rejected promise goes to the error middleware, as a thrown error does.
  const chain = handlers.map(
    (handler): RequestHandler =>
      (req, res, next) =>
        void Promise.resolve(handler(req, res, next)).catch(next),
  );
  routes.table.add(method, path, { service: '', key, chain: [routes.json, ...chain], alias: false, local: true });
}

/** `method path` of every entry mounted on `app` by service (for the test that compares them with the tables). */
export function mountedEndpoints(app: Express): Array<{ service: string; method: TableMethod; path: string }> {
  const routes = appRoutes.get(app)?.table.all() ?? [];
  return routes
    .filter((route) => !route.value.alias && !route.value.local)
    .map((route) => ({
      service: route.value.service,
      method: route.method,
      path: route.path.template,
    }));
}
