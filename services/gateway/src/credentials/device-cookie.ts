import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The known-device cookie: issued on a successful sign-in, it names the account signed in to
 * (the login throttle's account key, the SHA-256 of the lower-cased email) and the device (a
 * random id), signed with HMAC-SHA256. A sign-in presenting a valid one for the account it is
 * for is throttled on the device's own count, not the account's (`login-throttle.ts`).
 */
export const DEVICE_COOKIE = 'mkt_device';

export interface DeviceCookie {
  accountKey: string;
  deviceId: string;
  issuedAt: number;
}

export interface DeviceCookieSettings {
  /** The HMAC key (derived from the token signing key unless configured). */
  secret: Buffer;
  maxAgeMs: number;
}

/** The HMAC key: the configured secret, else one derived from the JWT private key (the same on every replica). */
export function deviceCookieSecret(configured: string | undefined, jwtPrivateKey: string): Buffer {
  if (configured) return Buffer.from(configured, 'utf8');
  return createHmac('sha256', jwtPrivateKey).update('mkt device cookie v1').digest();
}

const signatureOf = (payload: string, secret: Buffer) => createHmac('sha256', secret).update(payload).digest('base64url');

/** A new cookie value for a device that just signed in to the account (`deviceId` kept when the device had one). */
export function issueDeviceCookie(accountKey: string, settings: DeviceCookieSettings, now: Date, deviceId?: string): string {
  const payload = Buffer.from(
    JSON.stringify({ a: accountKey, d: deviceId ?? randomBytes(16).toString('base64url'), t: now.getTime() }),
  ).toString('base64url');
  return `${payload}.${signatureOf(payload, settings.secret)}`;
}

/** The cookie's content when its signature holds and it has not expired; null otherwise (treated as no cookie). */
export function readDeviceCookie(value: string | undefined, settings: DeviceCookieSettings, now: Date): DeviceCookie | null {
  if (!value || value.length > 512) return null;
  const [payload, signature, extra] = value.split('.');
  if (!payload || !signature || extra !== undefined) return null;
  const expected = Buffer.from(signatureOf(payload, settings.secret));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  try {
    const parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { a?: unknown; d?: unknown; t?: unknown };
    if (typeof parsed.a !== 'string' || typeof parsed.d !== 'string' || typeof parsed.t !== 'number') return null;
    if (parsed.t > now.getTime() || now.getTime() - parsed.t > settings.maxAgeMs) return null;
    return { accountKey: parsed.a, deviceId: parsed.d, issuedAt: parsed.t };
  } catch {
    return null;
  }
}

/** The value of one cookie of a `Cookie` header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The `Set-Cookie` header of a device cookie: HttpOnly, SameSite=Strict, sent only to the sign-in path. */
export function deviceCookieHeader(value: string, settings: DeviceCookieSettings, secure: boolean): string {
  const maxAge = Math.floor(settings.maxAgeMs / 1000);
  return `${DEVICE_COOKIE}=${value}; Max-Age=${maxAge}; Path=/v1/auth/login; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}
