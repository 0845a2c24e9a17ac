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
  /** The HMAC key (the configured one, else the gateway's own, kept in its database: `deviceCookieSecret`). */
  secret: Buffer;
  maxAgeMs: number;
}

/**
 * The HMAC key: the configured secret, else 256 random bits the first gateway to start makes and
 * keeps in its database (an atomic insert-if-absent: every replica reads the same key). It never
 * depends on the token signing keys, so rotating those keeps every device cookie valid.
 */
export async function deviceCookieSecret(configured: string | undefined, stored: SecretStore): Promise<Buffer> {
  if (configured) return Buffer.from(configured, 'utf8');
  return Buffer.from(await stored.getOrCreate('device-cookie', () => randomBytes(32).toString('base64url')), 'base64url');
}

/** Secrets kept by name; `getOrCreate` answers the stored value, storing `make()` when there is none. */
export interface SecretStore {
  getOrCreate(name: string, make: () => string): Promise<string>;
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
