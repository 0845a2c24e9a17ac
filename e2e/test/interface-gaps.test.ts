import { apiOf, book, dayFromNow, fund, loginAdmin, offerConsultation, register, slotsOf } from './fixtures';
import { startSystem, type System } from './system';

// The interface's gaps, end to end through the gateway (each also has component tests).
let system: System;
beforeAll(async () => {
  system = await startSystem();
}, 90_000);
afterAll(() => system?.stop());

const window = { validFrom: '2026-01-01T00:00:00.000Z', validTo: '2099-01-01T00:00:00.000Z' };

describe('the interface gaps, through the gateway', () => {
  test('create answers carry every field of their resource; another seller’s records are 403', async () => {
    const [seller, other] = await Promise.all([register(system, 'seller'), register(system, 'seller')]);
    const api = apiOf(system, seller);
    const pricing = await api('POST', '/consultations/pricing', { basePrice: 750, currency: 'ETB', comparePrice: 900 });
    expect(pricing.body.data).toMatchObject({
      basePrice: 750,
      pricingStrategy: 'Fixed',
      comparePrice: 900,
      isOnSale: false,
      isActive: true,
    });
    const discount = await api('POST', '/consultations/pricing/promotional-discounts', {
      name: 'Launch',
      description: 'Launch week',
      discountType: 'Fixed',
      discountValue: 19.99,
      ...window,
      couponCode: 'LAUNCH',
      maxUses: 5,
    });
    expect(discount.body.data).toMatchObject({ description: 'Launch week', discountValue: 19.99, ...window, maxUses: 5 });
    const rules = [{ type: 'user_type', condition: 'buyer', action: 'show', priority: 1 }];
    const visibility = await api('POST', '/consultations/visibility/rule-sets', { name: 'Buyers', ...window, visibilityRules: rules });
    expect(visibility.body.data).toMatchObject({ description: '', isDefault: false, isActive: true, ...window, visibilityRules: rules });

    const otherApi = apiOf(system, other);
    const ownRuleSet = await otherApi('POST', '/consultations/availability-rule-sets/rule-sets', {
      name: 'Mornings',
      timezone: 'Africa/Addis_Ababa',
      availabilityRules: [{ type: 'weekly', weekday: 'monday', intervals: [{ start_time: '09:00:00', end_time: '12:00:00' }] }],
    });
    const foreign = await otherApi('POST', '/consultations', {
      title: 'Not mine',
      duration: 30,
      sessionType: 'OneToOne',
      deliveryMode: 'Online',
      timezone: 'Africa/Addis_Ababa',
      language: 'English',
      category: 'Business',
      ruleSetId: ownRuleSet.body.data.id,
      pricingId: pricing.body.data.id,
    });
    expect(foreign.status).toBe(403);
    expect(foreign.body.errors).toEqual([expect.objectContaining({ path: 'pricingId', code: 'forbidden' })]);
  });

  test('userId names only the caller; a cancel keeps what it said; review status answers the key as sent', async () => {
    const admin = await loginAdmin(system);
    const [seller, buyer, stranger] = await Promise.all([register(system, 'seller'), register(system, 'buyer'), register(system, 'buyer')]);
    const offer = await offerConsultation(system, seller, admin, { priceMajor: 50 });
    expect(offer.referenceId).toMatch(/^MKT-CON-[A-Z0-9]{8}$/);
    const api = apiOf(system, buyer);
    const quote = (userId: string) =>
      api('POST', '/consultations/pricing/promotional-discounts/validate-coupon', {
        couponCode: 'NONE',
        consultationId: offer.id,
        userId,
      });
    expect((await quote(buyer.ref)).body.data).toMatchObject({ valid: false, usedByUser: false });
    const other = await quote(stranger.ref);
    expect(other.status).toBe(403);
    expect((await quote('MKT-USR-ZZZZZZZZ')).body).toEqual(other.body);

    await fund(system, [buyer], 100);
    const booked = await book(system, buyer, offer, slotsOf(offer, dayFromNow(2))[0]!);
    expect(booked.status).toBe(200);
    const cancelled = await api('POST', '/consultations/bookings/cancel', {
      bookingId: booked.body.data.bookingId,
      reason: 'Travelling',
      cancellationType: 'buyer_request',
      notes: 'Will book again',
    });
    expect(cancelled.body.data).toMatchObject({
      status: 'Cancelled',
      cancelledBy: 'buyer',
      reason: 'Travelling',
      cancellationType: 'buyer_request',
      notes: 'Will book again',
    });

    for (const key of [offer.id, offer.referenceId]) {
      const status = await api('GET', `/reviews/consultation/${key}/status`);
      expect(status.body.data).toEqual({ canReview: false, hasReviewed: false, sessionCompleted: false, consultationId: key });
    }
  });
});
