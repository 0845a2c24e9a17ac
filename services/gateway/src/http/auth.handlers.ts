import type { RequestHandler } from 'express';
import type { OPERATIONS } from '@mkt/contracts/gateway';
import { correlationIdOf, type OperationHandlers } from '@mkt/kit/http';
import type { Identity } from '../application/identity.use-cases';
import { cookieValue, DEVICE_COOKIE, deviceCookieHeader, type DeviceCookieSettings } from '../credentials/device-cookie';
import { jwks, type SigningKeys } from '../credentials/tokens';
import { addressKey, clientAddress } from './rate-limit';

type Handlers = OperationHandlers<typeof OPERATIONS, 'gateway'>;

/**
 * The gateway's own operations of the contracts' table (`/v1/auth/...`).
 * `trustProxyHops`: as the edge's, so the login throttle sees the address the limits see;
 * `limitRegistrations`: the registration limit, before the body is read; `devices`: the
 * known-device cookie a sign-in reads and sets (`Secure` on HTTPS requests and always when
 * `secureCookies`).
 */
export function authHandlers(
  identity: Identity,
  keys: SigningKeys,
  trustProxyHops: number,
  limitRegistrations: RequestHandler,
  devices: { settings: DeviceCookieSettings; secureCookies: boolean },
): Pick<Handlers, 'register' | 'login' | 'refreshSession' | 'logout' | 'getCurrentUser' | 'getJwks'> {
  return {
    register: {
      use: [limitRegistrations],
      handle: async ({ body }, { req }) => ({ data: await identity.register(body, correlationIdOf(req)), message: 'Registered' }),
    },
    login: async ({ body }, { req, res }) => {
      const address = addressKey(clientAddress(req, trustProxyHops));
      const { session, deviceCookie } = await identity.login(body, address, cookieValue(req.headers.cookie, DEVICE_COOKIE));
      res.setHeader('Set-Cookie', deviceCookieHeader(deviceCookie, devices.settings, devices.secureCookies || req.secure));
      return { data: session, message: 'Logged in' };
    },
    refreshSession: async ({ body }) => ({ data: await identity.refresh(body.refreshToken), message: 'Token refreshed' }),
    logout: async ({ body }) => {
      await identity.logout(body.refreshToken);
      return { data: null, message: 'Logged out' };
    },
    getCurrentUser: async (_input, { user }) => ({ data: await identity.me(user.id) }),
    // The standard JWKS document (not enveloped), so any JWT library can read it.
    getJwks: (_input, { res }) => {
      res.set('Cache-Control', 'public, max-age=300').json(jwks(keys));
    },
  };
}
