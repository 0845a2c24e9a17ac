import type { Router } from 'express';
import { LoginBody, LogoutBody, RefreshBody, RegisterBody, ok } from '@mkt/contracts';
import { authenticate, correlationIdOf, currentUser, serviceRouter, withInput } from '@mkt/kit';
import type { Identity } from '../domain/identity';
import { jwks, type SigningKeys } from '../domain/tokens';
import { addressKey, clientAddress } from './rate-limit';

/** `trustProxyHops`: as the edge's, so the login throttle sees the address the limits see. */
export function authRouter(identity: Identity, keys: SigningKeys, trustProxyHops: number): Router {
  const router = serviceRouter();
  router.post(
    '/register',
    withInput({ body: RegisterBody }, async (input, req, res) => {
      res.json(ok(await identity.register(input.body, correlationIdOf(req)), 'Registered'));
    }),
  );
  router.post(
    '/login',
    withInput({ body: LoginBody }, async (input, req, res) => {
      res.json(ok(await identity.login(input.body, addressKey(clientAddress(req, trustProxyHops))), 'Logged in'));
    }),
  );
  router.post(
    '/refresh',
    withInput({ body: RefreshBody }, async (input, _req, res) => {
      res.json(ok(await identity.refresh(input.body.refreshToken), 'Token refreshed'));
    }),
  );
  router.post(
    '/logout',
    withInput({ body: LogoutBody }, async (input, _req, res) => {
      await identity.logout(input.body.refreshToken);
      res.json(ok(null, 'Logged out'));
    }),
  );
  router.get('/me', authenticate(keys.publicKey), async (req, res) => {
    res.json(ok(await identity.me(currentUser(req).id)));
  });
  // The standard JWKS document (not enveloped), so any JWT library can read it.
  router.get('/.well-known/jwks.json', (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300').json(jwks(keys));
  });
  return router;
}
