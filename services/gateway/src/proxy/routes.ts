import { ROUTE_LIST, type RouteEntry, type Service } from '@mkt/contracts/routes';

/** The routing table of ADR 0002: which service owns which path prefix. */
export type Upstream = Exclude<Service, 'gateway'>;

export interface Route {
  prefix: string;
  upstream: Upstream;
}

/**
 * The prefix an entry's path is routed by: its leading segments up to the first that is not a
 * version (`/wallets/users/{id}/topup` → `/wallets`, `/v1/wallet/transfers` → `/v1/wallet`).
 */
export function prefixOf(path: string): string {
  const segments = path.split('/').slice(1);
  const end = segments.findIndex((segment) => !/^v\d+$/.test(segment));
  const prefix = `/${segments.slice(0, end + 1).join('/')}`;
  if (end < 0 || /[{}]/.test(prefix)) throw new Error(`No routing prefix in ${path}`);
  return prefix;
}

/**
 * The prefixes of the endpoint table, each of one service: the gateway's own (`/v1/auth`) are
 * not proxied. Two services under one prefix is a mistake in the table, refused here.
 */
export function routesOf(endpoints: readonly Pick<RouteEntry, 'path' | 'service'>[]): Route[] {
  const owners = new Map<string, Service>();
  for (const { path, service } of endpoints) {
    const prefix = prefixOf(path);
    const owner = owners.get(prefix);
    if (owner && owner !== service) throw new Error(`The prefix ${prefix} is both ${owner}'s and ${service}'s`);
    owners.set(prefix, service);
  }
  return [...owners]
    .filter((owned): owned is [string, Upstream] => owned[1] !== 'gateway')
    .map(([prefix, upstream]) => ({ prefix, upstream }));
}

// From the table's schema-free route list: the table itself (`@mkt/contracts/endpoints`) would load
// every area's zod schemas into the gateway only to read each entry's path and service.
export const ROUTES: Route[] = routesOf(ROUTE_LIST);

/** The owner of a path: the prefix must end at a segment boundary (`/walletsx` is nobody's). */
export function upstreamFor(path: string): Upstream | null {
  for (const { prefix, upstream } of ROUTES) {
    if (path === prefix || path.startsWith(`${prefix}/`)) return upstream;
  }
  return null;
}
