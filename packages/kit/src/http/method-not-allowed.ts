import type { Express, RequestHandler } from 'express';
import { MethodNotAllowed } from '../errors';

/** The parts of express's (router@2) layers this module reads. */
interface RouteLike {
  _methods(): string[];
}
interface LayerLike {
  route?: RouteLike;
  handle?: { stack?: LayerLike[] };
  match(path: string): { path: string } | false;
}

/**
 * Runs after the service's routes, when none answered: if another method is served on this
 * path, the answer is 405 with `Allow` (RFC 9110) instead of a 404 that would tell a client
 * the path does not exist. Asks the routers themselves, so it can never disagree with them.
 */
export function methodNotAllowed(app: Express): RequestHandler {
  return (req, _res, next) => {
    const stack = (app as unknown as { router: { stack: LayerLike[] } }).router.stack;
    const allowed = methodsServed(stack, req.path);
    if (allowed.size === 0 || allowed.has(req.method)) {
      next();
      return;
    }
    next(new MethodNotAllowed(req.method, [...allowed].sort()));
  };
}

/** Every method some route serves on `path`, walking into mounted routers. */
export function methodsServed(stack: LayerLike[], path: string): Set<string> {
  const methods = new Set<string>();
  for (const layer of stack) {
    const matched = layer.match(path);
    if (!matched) continue;
    if (layer.route) {
      for (const method of layer.route._methods()) methods.add(method);
    } else if (layer.handle?.stack) {
      const rest = path.slice(matched.path.length);
      if (rest !== '' && !rest.startsWith('/')) continue;
      for (const method of methodsServed(layer.handle.stack, rest === '' ? '/' : rest)) methods.add(method);
    }
  }
  return methods;
}
