import type { Router } from 'express';
import { CreateRuleSetBody, KeyParams, PageQuery, ok } from '@mkt/contracts';
import { currentUser, serviceRouter, withInput } from '@mkt/kit';
import type { Setup } from '../application/setup';
import { ruleSetListItem, ruleSetView } from './views';

/** Availability rule sets; behind the token `setupRouter` checks. */
export function ruleSetsRouter(setup: Setup): Router {
  const router = serviceRouter();
  const ruleSets = '/availability-rule-sets/rule-sets';
  router.post(
    ruleSets,
    withInput({ body: CreateRuleSetBody }, async (input, req, res) => {
      const r = ruleSetView(await setup.createRuleSet(currentUser(req), input.body));
      res.json(
        ok(
          { id: r.id, referenceId: r.referenceId, name: r.name, status: r.status, timezone: r.timezone, createdAt: r.createdAt },
          'Rule set created',
        ),
      );
    }),
  );
  router.get(
    ruleSets,
    withInput({ query: PageQuery.strict() }, async (input, req, res) => {
      const { items, pagination } = await setup.listRuleSets(currentUser(req), input.query);
      res.json(ok(items.map(ruleSetListItem), 'Rule sets retrieved', pagination));
    }),
  );
  router.get(
    `${ruleSets}/:id`,
    withInput({ params: KeyParams }, async (input, req, res) => {
      res.json(ok(ruleSetView(await setup.ruleSetDetail(currentUser(req), input.params.id))));
    }),
  );
  return router;
}
