import { BadRequest } from '../errors';

/** A method of the endpoint tables (lower case, as the contracts write it). */
export type TableMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * One path of a table (`/reviews/{id}`), split into segments: a literal matches itself exactly
 * (case-sensitive, percent-encoding not undone), a `{name}` one non-empty segment. A trailing
 * slash is a segment of its own (`/x/` is not `/x`): strict, as the table writes the path.
 */
export interface CompiledPath {
  template: string;
  segments: ReadonlyArray<{ literal: string } | { param: string }>;
  /** How many segments are parameters: the fewer, the more specific (a literal wins). */
  params: number;
}

export function compilePath(template: string): CompiledPath {
  if (!template.startsWith('/')) throw new Error(`A route path starts with '/': ${template}`);
  const segments = template
    .slice(1)
    .split('/')
    .map((segment) => {
      const param = /^\{(\w+)\}$/.exec(segment);
      if (param) return { param: param[1]! };
      if (/[{}:*]/.test(segment)) throw new Error(`A path segment is a literal or one {parameter}: ${template}`);
      return { literal: segment };
    });
  return { template, segments, params: segments.filter((segment) => 'param' in segment).length };
}

/** The parameters of `path` when it matches `compiled` (decoded), else null. */
export function matchPath(compiled: CompiledPath, path: string): Record<string, string> | null {
  const given = path.slice(1).split('/');
  if (!path.startsWith('/') || given.length !== compiled.segments.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < given.length; i += 1) {
    const segment = compiled.segments[i]!;
    const value = given[i]!;
    if ('literal' in segment) {
      if (segment.literal !== value) return null;
    } else {
      if (value === '') return null;
      params[segment.param] = decodeSegment(value);
    }
  }
  return params;
}

function decodeSegment(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    throw new BadRequest(`The path segment '${value}' is not valid percent-encoding`);
  }
}

/** A route the table holds: a method on a path, and what it carries for the dispatcher. */
export interface TableRoute<T> {
  method: TableMethod;
  path: CompiledPath;
  value: T;
}

export type Lookup<T> =
  /** A route serves this method here (HEAD is served by a GET route). */
  | { kind: 'found'; route: TableRoute<T>; params: Record<string, string> }
  /**
   * The path is served, the method is not. `allow`: the methods of the routes that own the path
   * (those matching it with the fewest parameters). `takenByParameter`: a route with more
   * parameters serves the method (`GET /orders/{id}` for `GET /orders/cancel`), which a literal
   * path never hands to it.
   */
  | { kind: 'method'; allow: string[]; takenByParameter: boolean }
  | { kind: 'none' };

/**
 * The routes of one app, matched without any router: the routes matching a path with the fewest
 * parameters own it, so a literal segment wins over a parameter in every method (405 rather than
 * `cancel` read as an id). `Allow` lists the owners' methods, with HEAD beside GET.
 */
export class RouteTable<T> {
  private readonly routes: TableRoute<T>[] = [];

  add(method: TableMethod, template: string, value: T): void {
    const path = compilePath(template);
    if (this.routes.some((route) => route.method === method && route.path.template === template))
      throw new Error(`The route ${method.toUpperCase()} ${template} is mounted twice`);
    this.routes.push({ method, path, value });
  }

  all(): ReadonlyArray<TableRoute<T>> {
    return this.routes;
  }

  lookup(method: string, path: string): Lookup<T> {
    const matches: Array<{ route: TableRoute<T>; params: Record<string, string> }> = [];
    for (const route of this.routes) {
      const params = matchPath(route.path, path);
      if (params) matches.push({ route, params });
    }
    if (matches.length === 0) return { kind: 'none' };
    const fewest = Math.min(...matches.map((match) => match.route.path.params));
    const owners = matches.filter((match) => match.route.path.params === fewest);
    const wanted = method === 'HEAD' ? ['head', 'get'] : [method.toLowerCase()];
    for (const want of wanted) {
      const found = owners.find((match) => match.route.method === want);
      if (found) return { kind: 'found', ...found };
    }
    return {
      kind: 'method',
      allow: allowOf(owners.map((match) => match.route.method)),
      takenByParameter: matches.some((match) => wanted.includes(match.route.method)),
    };
  }
}

/** `Allow` of a set of methods: upper case, sorted, HEAD wherever GET is. */
export function allowOf(methods: readonly string[]): string[] {
  const upper = new Set(methods.map((method) => method.toUpperCase()));
  if (upper.has('GET')) upper.add('HEAD');
  return [...upper].sort();
}

/** Express's spelling of a table path, for labels (`/reviews/{id}` → `/reviews/:id`). */
export function expressPath(template: string): string {
  return template.replace(/\{(\w+)\}/g, ':$1');
}
