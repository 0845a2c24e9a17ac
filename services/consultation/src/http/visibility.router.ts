import type { Router } from 'express';
import { CreateVisibilityRuleSetBody, VisibilityStatusBody, ok } from '@mkt/contracts';
import { currentUser, serviceRouter, withInput } from '@mkt/kit';
import type { Setup } from '../application/setup';
import { visibilityRuleSetView } from './views';

/** Visibility rule sets and the visibility verdicts; behind the token `setupRouter` checks. */
export function visibilityRouter(setup: Setup): Router {
  const router = serviceRouter();
  router.post(
    '/visibility/rule-sets',
    withInput({ body: CreateVisibilityRuleSetBody }, async (input, req, res) => {
      const v = await setup.createVisibilityRuleSet(currentUser(req), input.body);
      res.json(ok(visibilityRuleSetView(v), 'Visibility rule set created'));
    }),
  );
  router.post(
    '/visibility/status',
    withInput({ body: VisibilityStatusBody }, async (input, req, res) => {
      res.json(ok({ consultations: await setup.visibilityStatus(currentUser(req), input.body) }));
    }),
  );
  return router;
}
