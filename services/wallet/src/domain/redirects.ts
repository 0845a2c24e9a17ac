const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Where a top-up may send the payer back: an origin of CHECKOUT_REDIRECT_ORIGINS exactly.
 * With the list empty (development and tests only; production refuses to start without one)
 * any localhost origin is allowed, so a developer's client works without configuration.
 */
export function redirectAllowed(redirectUrl: string, origins: readonly string[]): boolean {
  let url: URL;
  try {
    url = new URL(redirectUrl);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  if (url.username || url.password) return false;
  if (origins.length === 0) return LOCAL_HOSTS.has(url.hostname);
  return origins.includes(url.origin);
}
