import { admin, as, givenOffer, newUser, useConsultationApp, weekdays, ZONE, models } from './harness';

const app = useConsultationApp();

// Another seller's rule set or pricing is their record: naming it is 403 `forbidden` (ADR
// 0003), an unknown one 404 — on create and on update, and nothing is written either way.

const consultation = (ruleSetId: string, pricingId: string) => ({
  title: 'Tax advice',
  duration: 30,
  sessionType: 'OneToOne',
  deliveryMode: 'Online',
  timezone: ZONE,
  language: 'en',
  category: 'Finance',
  ruleSetId,
  pricingId,
});

async function givenSetup(seller: ReturnType<typeof newUser>) {
  const call = as(app, seller);
  const ruleSet = await call('POST', '/consultations/availability-rule-sets/rule-sets', {
    name: 'Mornings',
    timezone: ZONE,
    availabilityRules: weekdays.map((weekday) => ({
      type: 'weekly',
      weekday,
      intervals: [{ start_time: '09:00:00', end_time: '12:00:00' }],
    })),
  });
  const pricing = await call('POST', '/consultations/pricing', { basePrice: 100, currency: 'ETB' });
  return { ruleSetId: ruleSet.body.data.referenceId as string, pricingId: pricing.body.data.referenceId as string };
}

describe('another seller’s rule set or pricing', () => {
  test('creating with one is 403 forbidden naming the field; nothing is created', async () => {
    const owner = await givenOffer(app);
    const thief = newUser('seller');
    const own = await givenSetup(thief);
    for (const [body, path] of [
      [consultation(owner.ruleSetId, own.pricingId), 'ruleSetId'],
      [consultation(own.ruleSetId, owner.pricingId), 'pricingId'],
    ] as const) {
      const res = await as(app, thief)('POST', '/consultations', body);
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ success: false, errors: [{ path, code: 'forbidden' }] });
    }
    expect(await models().Consultation.countDocuments({ sellerId: thief.id })).toBe(0);
  });

  test('unknown ids stay 404; the seller’s own are accepted', async () => {
    const seller = newUser('seller');
    const own = await givenSetup(seller);
    const call = as(app, seller);
    const unknownRuleSet = await call('POST', '/consultations', consultation('MKT-AVL-RST-ZZZZZZZZ', own.pricingId));
    expect(unknownRuleSet.status).toBe(404);
    expect(unknownRuleSet.body.errors[0].code).toBe('not_found');
    expect((await call('POST', '/consultations', consultation(own.ruleSetId, 'PR_ZZZZZZZZ'))).status).toBe(404);
    expect((await call('POST', '/consultations', consultation(own.ruleSetId, own.pricingId))).status).toBe(200);
  });

  test('updating to one is 403 forbidden, also for an admin editing on the owner’s behalf; nothing changes', async () => {
    const offer = await givenOffer(app);
    const other = await givenOffer(app);
    for (const caller of [offer.seller, admin]) {
      for (const body of [{ ruleSetId: other.ruleSetId }, { pricingId: other.pricingId }]) {
        const res = await as(app, caller)('PUT', `/consultations/${offer.referenceId}`, body);
        expect(res.status).toBe(403);
        expect(res.body.errors[0]).toMatchObject({ code: 'forbidden', path: Object.keys(body)[0] });
      }
    }
    expect(await models().Consultation.findById(offer.consultationId).lean()).toMatchObject({
      ruleSetId: offer.ruleSetId,
      pricingId: offer.pricingId,
      currentStatus: 'Approved',
    });
    const unknown = await as(app, offer.seller)('PUT', `/consultations/${offer.referenceId}`, { ruleSetId: 'MKT-AVL-RST-ZZZZZZZZ' });
    expect(unknown.status).toBe(404);
  });
});
