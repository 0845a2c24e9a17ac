import type { Express, RequestHandler } from 'express';
import { MethodNotAllowed } from '../errors';

/** The parts of express's (router@2) layers this module reads. */
interface RouteLike {
  _methods(): string[];
}
interface LayerLike {
  route?: RouteLike;
  handle?: { stack?: LayerLike[] };
  match(path: string): { path: string; keys: string[] } | false;
}

interface RouteMatch {
  methods: string[];
  /** Path parameters the route (with its mount paths) used to match. */
  params: number;
}

const stackOf = (app: Express) => (app as unknown as { router: { stack: LayerLike[] } }).router.stack;

/**
 * @deprecated Reads express's private router layers; `mountEndpoints` answers 405 and OPTIONS
 * from kit's own matcher (`route-table.ts`). Kept (inside `createService`) for routes mounted as
 * express routers until every service has moved.
 *
 * Runs before the service's routes and decides which routes own a path: those that match it
 * with the fewest parameters, so a literal segment wins over a parameter, as in most routers
 * (`/bookings/cancel` belongs to `POST /bookings/cancel`, not to `GET /bookings/:id`).
 * - A method the owners do not serve but a parameter route would take is 405 with `Allow`
 *   here, never handed to a route that would read `cancel` as an id.
 * - OPTIONS is 204 with the owners' methods in `Allow`.
 * Anything else goes on to the routes (and their authentication) as usual.
 */
export function literalPathsWin(app: Express): RequestHandler {
  return (req, res, next) => {
    const { owners, all } = methodsOf(stackOf(app), req.path);
    if (owners.size === 0) return next();
    const allow = [...owners].sort().join(', ');
    if (req.method === 'OPTIONS') {
      res.set('Allow', allow).status(204).end();
      return;
    }
    if (!owners.has(req.method) && all.has(req.method)) return next(new MethodNotAllowed(req.method, [...owners].sort()));
    next();
  };
}

/**
 * @deprecated As `literalPathsWin`: `mountEndpoints` answers 405 itself.
 *
 * Runs after the service's routes, when none answered: if another method is served on this
 * path, the answer is 405 with `Allow` (RFC 9110) instead of a 404 that would tell a client
 * the path does not exist. Asks the routers themselves, so it can never disagree with them.
 */
export function methodNotAllowed(app: Express): RequestHandler {
  return (req, _res, next) => {
    const allowed = methodsServed(stackOf(app), req.path);
    if (allowed.size === 0 || allowed.has(req.method)) return next();
    next(new MethodNotAllowed(req.method, [...allowed].sort()));
  };
}

/**
 * @deprecated As `literalPathsWin`.
 *
 * The methods of the routes that own `path` (those matching it with the fewest parameters).
 */
export function methodsServed(stack: LayerLike[], path: string): Set<string> {
  return methodsOf(stack, path).owners;
}

function methodsOf(stack: LayerLike[], path: string): { owners: Set<string>; all: Set<string> } {
  const matches = routesMatching(stack, path, 0);
  const fewest = Math.min(...matches.map((match) => match.params));
  return {
    owners: new Set(matches.filter((match) => match.params === fewest).flatMap((match) => match.methods)),
    all: new Set(matches.flatMap((match) => match.methods)),
  };
}

/** Every route matching `path`, walking into mounted routers. */
function routesMatching(stack: LayerLike[], path: string, params: number): RouteMatch[] {
  const found: RouteMatch[] = [];
  for (const layer of stack) {
    const matched = layer.match(path);
    if (!matched) continue;
    const used = params + matched.keys.length;
    if (layer.route) {
      found.push({ methods: layer.route._methods(), params: used });
    } else if (layer.handle?.stack) {
      const rest = path.slice(matched.path.length);
      if (rest !== '' && !rest.startsWith('/')) continue;
      found.push(...routesMatching(layer.handle.stack, rest === '' ? '/' : rest, used));
    }
  }
  return found;
}
