import type { RequestHandler } from 'express';
import { LoginBody, LogoutBody, RefreshBody, RegisterBody, ok } from '@mkt/contracts';
import { correlationIdOf, currentUser, handle, type MountOptions } from '@mkt/kit';
import type { Identity } from '../application/identity';
import { cookieValue, DEVICE_COOKIE, deviceCookieHeader, type DeviceCookieSettings } from '../credentials/device-cookie';
import { jwks, type SigningKeys } from '../credentials/tokens';
import { addressKey, clientAddress } from './rate-limit';

/**
 * The gateway's own entries of the contracts' endpoint table (`/v1/auth/...`).
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
): MountOptions['handlers'] {
  return {
    'POST /v1/auth/register': handle(
      { body: RegisterBody },
      async (input, req, res) => {
        res.json(ok(await identity.register(input.body, correlationIdOf(req)), 'Registered'));
      },
      { use: [limitRegistrations] },
    ),
    'POST /v1/auth/login': handle({ body: LoginBody }, async (input, req, res) => {
      const address = addressKey(clientAddress(req, trustProxyHops));
      const { session, deviceCookie } = await identity.login(input.body, address, cookieValue(req.headers.cookie, DEVICE_COOKIE));
      res.setHeader('Set-Cookie', deviceCookieHeader(deviceCookie, devices.settings, devices.secureCookies || req.secure));
      res.json(ok(session, 'Logged in'));
    }),
    'POST /v1/auth/refresh': handle({ body: RefreshBody }, async (input, _req, res) => {
      res.json(ok(await identity.refresh(input.body.refreshToken), 'Token refreshed'));
    }),
    'POST /v1/auth/logout': handle({ body: LogoutBody }, async (input, _req, res) => {
      await identity.logout(input.body.refreshToken);
      res.json(ok(null, 'Logged out'));
    }),
    'GET /v1/auth/me': handle({}, async (_input, req, res) => {
      res.json(ok(await identity.me(currentUser(req).id)));
    }),
    // The standard JWKS document (not enveloped), so any JWT library can read it.
    'GET /v1/auth/.well-known/jwks.json': handle({}, (_input, _req, res) => {
      res.set('Cache-Control', 'public, max-age=300').json(jwks(keys));
    }),
  };
}
