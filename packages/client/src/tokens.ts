/** The pair every sign-in, registration and refresh answers. */
export interface Tokens {
  accessToken: string;
  refreshToken: string;
}

/**
 * Whether an access token (a JWT) has expired by its `exp` claim, read without verifying it (the
 * gateway verifies; the client only decides whether a 401 calls for a refresh). `leewaySeconds`
 * allows for a client clock behind the gateway's. A token that is not a readable JWT counts as
 * not expired: its 401 is not one a refresh cures.
 */
export function accessTokenExpired(token: string, leewaySeconds = 60, now = Date.now()): boolean {
  const payload = token.split('.')[1];
  if (!payload) return false;
  try {
    const { exp } = JSON.parse(decodeBase64Url(payload)) as { exp?: unknown };
    return typeof exp === 'number' && exp * 1000 <= now + leewaySeconds * 1000;
  } catch {
    return false;
  }
}

/** base64url → text, with what browsers and Node.js both have (atob, TextDecoder). */
function decodeBase64Url(text: string): string {
  const base64 = text
    .replace(/-/g, '+')
    .replace(/_/g, '/')
    .padEnd(Math.ceil(text.length / 4) * 4, '=');
  const binary = atob(base64);
  return new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
}
