import { admin, approveAsRead, as, givenOffer, newUser, useConsultationApp, weekdays, ZONE, models } from './harness';

const app = useConsultationApp();

describe('consultations', () => {
  test('are created Pending/Hidden, unseen by the public until an admin approves them', async () => {
    const offer = await givenOffer(app, { approve: false });
    const anonymous = as(app, undefined);
    const detail = await as(app, offer.seller)('GET', `/consultations/${offer.consultationId}`);
    expect(detail.body.data).toMatchObject({
      currentStatus: 'Pending',
      visibility: 'Hidden',
      pricing: { basePrice: 500, currency: 'ETB' },
      timezone: ZONE,
    });
    expect(detail.body.data.referenceId).toMatch(/^MKT-CON-[A-Z0-9]{8}$/);
    expect((await anonymous('GET', `/consultations/${offer.consultationId}`)).status).toBe(404);
    const mine = await as(app, offer.seller)('GET', '/consultations?status=Pending');
    expect(mine.body.data.consultations.map((c: { id: string }) => c.id)).toContain(offer.consultationId);
    expect((await anonymous('GET', '/consultations?limit=100')).body.data.consultations.map((c: { id: string }) => c.id)).not.toContain(
      offer.consultationId,
    );

    expect((await as(app, offer.seller)('POST', `/consultations/${offer.consultationId}/approve`)).status).toBe(403);
    const approved = await approveAsRead(app, offer.referenceId);
    expect(approved.body.data).toMatchObject({ currentStatus: 'Approved', visibility: 'Published' });
    expect((await as(app, admin)('POST', `/consultations/${offer.consultationId}/approve`)).status).toBe(409);
    const publicDetail = await anonymous('GET', `/consultations/${offer.referenceId}`);
    expect(publicDetail.body.data).toMatchObject({
      id: offer.consultationId,
      pricing: { basePrice: 500, currency: 'ETB' },
      averageRating: 0,
      totalReviews: 0,
    });
    const listed = await anonymous('GET', '/consultations?category=Career&limit=100');
    expect(listed.body.data.pagination).toMatchObject({ page: 1, limit: 100 });
    expect(listed.body.data.consultations.find((c: { id: string }) => c.id === offer.consultationId)).toEqual({
      id: offer.consultationId,
      referenceId: offer.referenceId,
      title: 'Career coaching',
      duration: 60,
      currentStatus: 'Approved',
      visibility: 'Published',
      category: 'Career',
    });
  });

  test('the owner updates; others cannot; another seller’s rule set or pricing is refused', async () => {
    const offer = await givenOffer(app);
    const updated = await as(app, offer.seller)('PUT', `/consultations/${offer.consultationId}`, {
      title: 'Career coaching plus',
      duration: 90,
    });
    expect(updated.body.data).toMatchObject({ id: offer.consultationId, title: 'Career coaching plus', duration: 90 });
    expect((await as(app, newUser('seller'))('PUT', `/consultations/${offer.consultationId}`, { title: 'mine' })).status).toBe(403);
    const thief = newUser('seller');
    const ownPricing = await as(app, thief)('POST', '/consultations/pricing', { basePrice: 1, currency: 'ETB' });
    const res = await as(app, thief)('POST', '/consultations', {
      title: 'x',
      duration: 30,
      sessionType: 'OneToOne',
      deliveryMode: 'Online',
      timezone: ZONE,
      language: 'en',
      category: 'c',
      ruleSetId: offer.ruleSetId,
      pricingId: ownPricing.body.data.id,
    });
    expect(res.status).toBe(403);
    expect(res.body.errors[0]).toMatchObject({ code: 'forbidden', path: 'ruleSetId' });
    expect((await as(app, newUser('buyer'))('POST', '/consultations', { title: 'x' })).status).toBe(400);
  });

  test('a OneToOne consultation has capacity 1; bad time zones are refused (422: rules, not schema)', async () => {
    const seller = newUser('seller');
    const body = {
      title: 'x',
      duration: 30,
      sessionType: 'OneToOne',
      maxCapacity: 3,
      deliveryMode: 'Online',
      timezone: 'Mars/Olympus',
      language: 'en',
      category: 'c',
      ruleSetId: 'a',
      pricingId: 'b',
    };
    const res = await as(app, seller)('POST', '/consultations', body);
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([expect.objectContaining({ path: 'maxCapacity', code: 'invalid' })]);
    // The time zone is checked against the IANA list once the body is valid.
    const zone = await as(app, seller)('POST', '/consultations', { ...body, maxCapacity: 1 });
    expect(zone.status).toBe(422);
    expect(zone.body.errors).toEqual([expect.objectContaining({ path: 'timezone', code: 'invalid' })]);
    // A schema problem next to the rule: 400.
    const mixed = await as(app, seller)('POST', '/consultations', { ...body, duration: 'half an hour' });
    expect(mixed.status).toBe(400);
    expect(mixed.body.errors.map((e: { path: string }) => e.path)).toContain('duration');
    expect(await models().Consultation.countDocuments({ sellerId: seller.id })).toBe(0);
  });
});

describe('availability rule sets', () => {
  const rule = (weekday: string, intervals: Array<[string, string]>) => ({
    type: 'weekly',
    weekday,
    intervals: intervals.map(([start_time, end_time]) => ({ start_time, end_time, enabled: true })),
  });

  test('are created Active and read back whole by their seller only', async () => {
    const seller = newUser('seller');
    const created = await as(app, seller)('POST', '/consultations/availability-rule-sets/rule-sets', {
      name: 'Mornings',
      description: 'Before lunch',
      timezone: 'America/New_York',
      durationType: 'Indefinite',
      isDefault: true,
      metaData: { autoAccept: true, bufferTime: 15, maxBookingsPerDay: 4 },
      availabilityRules: [rule('monday', [['09:00:00', '12:00:00']])],
    });
    expect(created.body.data).toMatchObject({ name: 'Mornings', status: 'Active', timezone: 'America/New_York' });
    expect(created.body.data.referenceId).toMatch(/^MKT-AVL-RST-[A-Z0-9]{8}$/);
    const detail = await as(app, seller)('GET', `/consultations/availability-rule-sets/rule-sets/${created.body.data.referenceId}`);
    expect(detail.body.data).toMatchObject({
      description: 'Before lunch',
      metaData: { bufferTime: 15, maxBookingsPerDay: 4 },
      availabilityRules: [rule('monday', [['09:00:00', '12:00:00']])],
    });
    expect(
      (await as(app, newUser('seller'))('GET', `/consultations/availability-rule-sets/rule-sets/${created.body.data.id}`)).status,
    ).toBe(403);
  });

  // 400: against the published schema; 422: schema-valid but against a rule (one field against
  // another, or a time zone not in the IANA list); both at once: 400.
  test.each([
    [{ timezone: 'Nowhere/City' }, 422, 'timezone'],
    [
      {
        availabilityRules: [
          rule('monday', [
            ['09:00:00', '12:00:00'],
            ['11:00:00', '13:00:00'],
          ]),
        ],
      },
      422,
      'availabilityRules.0.intervals',
    ],
    [{ availabilityRules: [rule('monday', [['12:00:00', '09:00:00']])] }, 422, 'availabilityRules.0.intervals.0.end_time'],
    [{ availabilityRules: [rule('monday', [['9:00', '12:00:00']])] }, 400, 'availabilityRules.0.intervals.0.start_time'],
    [{ availabilityRules: [rule('funday', [['09:00:00', '12:00:00']])] }, 400, 'availabilityRules.0.weekday'],
    [
      { availabilityRules: [rule('monday', [['09:00:00', '10:00:00']]), rule('monday', [['11:00:00', '12:00:00']])] },
      422,
      'availabilityRules',
    ],
    [
      { availabilityRules: [rule('monday', [['12:00:00', '09:00:00']]), rule('funday', [['09:00:00', '12:00:00']])] },
      400,
      'availabilityRules.1.weekday',
    ],
  ])('%j is %i on %s', async (overrides, status, path) => {
    const seller = newUser('seller');
    const res = await as(app, seller)('POST', '/consultations/availability-rule-sets/rule-sets', {
      name: 'x',
      timezone: ZONE,
      availabilityRules: [rule('monday', [['09:00:00', '12:00:00']])],
      ...overrides,
    });
    expect(res.status).toBe(status);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    expect(res.body.errors.every((e: { code: string }) => e.code === 'invalid')).toBe(true);
    expect(await models().RuleSet.countDocuments({ sellerId: seller.id })).toBe(0);
  });

  test('the listing counts bookings and utilization', async () => {
    const seller = newUser('seller');
    await as(app, seller)('POST', '/consultations/availability-rule-sets/rule-sets', {
      name: 'All week',
      timezone: ZONE,
      availabilityRules: weekdays.map((weekday) => rule(weekday, [['09:00:00', '10:00:00']])),
    });
    const listed = await as(app, seller)('GET', '/consultations/availability-rule-sets/rule-sets');
    expect(listed.body).toMatchObject({ success: true, pagination: { page: 1, limit: 20, total: 1 } });
    expect(listed.body.data[0]).toMatchObject({ name: 'All week', status: 'Active', bookings: 0, utilization: 0, timezone: ZONE });
  });
});
