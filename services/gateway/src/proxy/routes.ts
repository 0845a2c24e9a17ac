/** The routing table of DESIGN §3: which service owns which path prefix. */
export type Upstream = 'wallet' | 'catalog' | 'crm' | 'consultation' | 'review';

export interface Route {
  prefix: string;
  upstream: Upstream;
}

export const ROUTES: Route[] = [
  { prefix: '/wallets', upstream: 'wallet' },
  { prefix: '/v1/wallet', upstream: 'wallet' },
  { prefix: '/physical-products', upstream: 'catalog' },
  { prefix: '/v1/products', upstream: 'catalog' },
  { prefix: '/v1/shops', upstream: 'catalog' },
  { prefix: '/customers', upstream: 'crm' },
  { prefix: '/consultations', upstream: 'consultation' },
  { prefix: '/reviews', upstream: 'review' },
];

/** The owner of a path: the prefix must end at a segment boundary (`/walletsx` is nobody's). */
export function upstreamFor(path: string): Upstream | null {
  for (const { prefix, upstream } of ROUTES) {
    if (path === prefix || path.startsWith(`${prefix}/`)) return upstream;
  }
  return null;
}
