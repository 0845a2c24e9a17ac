import { Router } from 'express';
import { LoginBody, LogoutBody, RefreshBody, RegisterBody, ok } from '@mkt/contracts';
import { authenticate, correlationIdOf, currentUser, validate } from '@mkt/kit';
import type { Identity } from '../domain/identity';
import { jwks, type SigningKeys } from '../domain/tokens';

export function authRouter(identity: Identity, keys: SigningKeys): Router {
  const router = Router();
  router.post('/register', validate({ body: RegisterBody }), async (req, res) => {
    res.json(ok(await identity.register(res.locals.body, correlationIdOf(req)), 'Registered'));
  });
  router.post('/login', validate({ body: LoginBody }), async (_req, res) => {
    res.json(ok(await identity.login(res.locals.body), 'Logged in'));
  });
  router.post('/refresh', validate({ body: RefreshBody }), async (_req, res) => {
    res.json(ok(await identity.refresh(res.locals.body.refreshToken), 'Token refreshed'));
  });
  router.post('/logout', validate({ body: LogoutBody }), async (_req, res) => {
    await identity.logout(res.locals.body.refreshToken);
    res.json(ok(null, 'Logged out'));
  });
  router.get('/me', authenticate(keys.publicKey), async (req, res) => {
    res.json(ok(await identity.me(currentUser(req).id)));
  });
  // The standard JWKS document (not enveloped), so any JWT library can read it.
  router.get('/.well-known/jwks.json', (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300').json(jwks(keys));
  });
  return router;
}
