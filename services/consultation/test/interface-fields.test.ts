import {
  BookingCancelledResponse,
  BookingResponse,
  DiscountCreatedResponse,
  PricingCreatedResponse,
  SessionNoShowResponse,
  VisibilityRuleSetCreatedResponse,
} from '@mkt/contracts';
import type { z } from 'zod';
import { as, bookingBody, givenOffer, newUser, useConsultationApp, models } from './harness';

const app = useConsultationApp();

// Creates answer with every field the interface's Resources section lists for what they made,
// and request fields once accepted and dropped are kept and shown. Each answer is also read
// through its (strict) published response schema.

function expectSchema(schema: z.ZodType, data: unknown): void {
  expect(schema.safeParse(data).error?.issues ?? []).toEqual([]);
}

const window = { validFrom: '2030-01-01T00:00:00.000Z', validTo: '2030-06-30T23:59:59.000Z' };

describe('create answers carry the interface’s fields', () => {
  test('pricing: pricingStrategy, comparePrice (null when not set) and isActive beside the rest', async () => {
    const seller = as(app, newUser('seller'));
    const full = await seller('POST', '/consultations/pricing', {
      basePrice: 750.5,
      currency: 'ETB',
      pricingStrategy: 'Fixed',
      comparePrice: 900,
      isOnSale: true,
      isActive: false,
    });
    expect(full.status).toBe(200);
    expect(full.body.data).toEqual({
      id: expect.stringMatching(/^pr_/),
      referenceId: expect.stringMatching(/^PR_/),
      basePrice: 750.5,
      currency: 'ETB',
      pricingStrategy: 'Fixed',
      comparePrice: 900,
      isOnSale: true,
      isActive: false,
      createdAt: expect.any(String),
    });
    expectSchema(PricingCreatedResponse, full.body.data);
    expect(await models().Pricing.findById(full.body.data.id).lean()).toMatchObject({ basePriceMinor: 75050, comparePriceMinor: 90000 });

    const bare = await seller('POST', '/consultations/pricing', { basePrice: 10, currency: 'ETB' });
    expect(bare.body.data).toMatchObject({ pricingStrategy: 'Fixed', comparePrice: null, isOnSale: false, isActive: true });
    expectSchema(PricingCreatedResponse, bare.body.data);
  });

  test('promotional discount: description, discountType, validFrom, validTo and maxUses', async () => {
    const seller = as(app, newUser('seller'));
    const created = await seller('POST', '/consultations/pricing/promotional-discounts', {
      name: 'Launch week',
      description: '15.50 off the first week',
      discountType: 'Fixed',
      discountValue: 15.5,
      ...window,
      couponCode: 'launch15',
      maxUses: 40,
      isActive: true,
    });
    expect(created.status).toBe(200);
    expect(created.body.data).toEqual({
      id: expect.stringMatching(/^pd_/),
      referenceId: expect.stringMatching(/^PD_/),
      name: 'Launch week',
      description: '15.50 off the first week',
      couponCode: 'LAUNCH15',
      discountType: 'Fixed',
      discountValue: 15.5,
      ...window,
      maxUses: 40,
      maxUsesPerBuyer: 1,
      isActive: true,
    });
    expectSchema(DiscountCreatedResponse, created.body.data);
    // A Fixed value is money: stored in minor units.
    expect(await models().Discount.findById(created.body.data.id).lean()).toMatchObject({ discountValue: 1550, maxUses: 40 });
    const percentage = await seller('POST', '/consultations/pricing/promotional-discounts', {
      name: 'Tenth',
      discountType: 'Percentage',
      discountValue: 12.5,
      ...window,
      couponCode: 'TENTH',
      maxUses: 1,
    });
    expect(percentage.body.data).toMatchObject({ description: '', discountType: 'Percentage', discountValue: 12.5, maxUses: 1 });
    expectSchema(DiscountCreatedResponse, percentage.body.data);
  });

  test('visibility rule set: description, isDefault, validFrom, validTo and visibilityRules', async () => {
    const seller = as(app, newUser('seller'));
    const rules = [
      { type: 'user_type', condition: 'seller', action: 'hide', priority: 1 },
      { type: 'location', condition: 'ET, KE', action: 'show', priority: 2 },
    ];
    const created = await seller('POST', '/consultations/visibility/rule-sets', {
      name: 'Buyers only',
      description: 'Hidden from sellers browsing',
      isDefault: true,
      isActive: true,
      ...window,
      visibilityRules: rules,
    });
    expect(created.status).toBe(200);
    expect(created.body.data).toEqual({
      id: expect.stringMatching(/^vrs_/),
      referenceId: expect.stringMatching(/^VRS_/),
      name: 'Buyers only',
      description: 'Hidden from sellers browsing',
      isDefault: true,
      isActive: true,
      ...window,
      visibilityRules: rules,
      createdAt: expect.any(String),
    });
    expectSchema(VisibilityRuleSetCreatedResponse, created.body.data);
    expect(await models().VisibilityRuleSet.findById(created.body.data.id).lean()).toMatchObject({
      isDefault: true,
      visibilityRules: rules,
    });
    const defaults = await seller('POST', '/consultations/visibility/rule-sets', { name: 'Plain', ...window, visibilityRules: rules });
    expect(defaults.body.data).toMatchObject({ description: '', isDefault: false, isActive: true });
  });
});

describe('request fields are kept, not dropped', () => {
  test('no-show: attemptedContact and contactMethod are stored on the session and answered (null when not said)', async () => {
    const offer = await givenOffer(app);
    const seller = as(app, offer.seller);
    const sessionIds: string[] = [];
    for (const startTime of ['10:00', '11:00']) {
      const endTime = `${Number(startTime.slice(0, 2)) + 1}:00`;
      const booked = await as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer, { startTime, endTime }));
      sessionIds.push(booked.body.data.sessionId);
    }
    // Bookings are taken only for future slots: the slots begin as time would make them.
    for (const [index, sessionId] of sessionIds.entries())
      await models().Session.updateOne(
        { _id: sessionId },
        { $set: { startsAt: new Date(Date.now() - (index + 1) * 3_600_000), endsAt: new Date(Date.now() - index * 3_600_000 - 1_000) } },
      );
    const [told, untold] = sessionIds as [string, string];
    const marked = await seller('POST', `/consultations/sessions/${told}/no-show`, {
      notes: 'No answer',
      attemptedContact: true,
      contactMethod: 'phone',
    });
    expect(marked.status).toBe(200);
    expect(marked.body.data).toEqual({
      sessionId: told,
      status: 'No Show',
      markedAt: expect.any(String),
      attemptedContact: true,
      contactMethod: 'phone',
    });
    expectSchema(SessionNoShowResponse, marked.body.data);
    expect(await models().Session.findById(told).lean()).toMatchObject({
      attemptedContact: true,
      contactMethod: 'phone',
      notes: 'No answer',
    });

    const silent = await seller('POST', `/consultations/sessions/${untold}/no-show`, { attemptedContact: false });
    expect(silent.body.data).toMatchObject({ attemptedContact: false, contactMethod: null });
    expectSchema(SessionNoShowResponse, silent.body.data);
  });

  test('cancel: reason, cancellationType and notes are stored on the booking, answered, and shown in the booking', async () => {
    const offer = await givenOffer(app);
    const buyer = as(app, newUser());
    const booked = await buyer('POST', '/consultations/bookings', bookingBody(offer, { notes: 'Please call first' }));
    expect(booked.body.data).toMatchObject({ status: 'Confirmed', notes: 'Please call first', cancellation: null });
    expectSchema(BookingResponse, booked.body.data);
    const bookingId = booked.body.data.bookingId as string;

    const cancelled = await buyer('POST', '/consultations/bookings/cancel', {
      bookingId,
      reason: 'Travelling that week',
      cancellationType: 'buyer_request',
      notes: 'Will book again',
      refundAmount: 200,
    });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data).toEqual({
      bookingId,
      status: 'Cancelled',
      refundStatus: 'Pending',
      refundAmount: 200,
      cancelledAt: expect.any(String),
      cancelledBy: 'buyer',
      reason: 'Travelling that week',
      cancellationType: 'buyer_request',
      notes: 'Will book again',
    });
    expectSchema(BookingCancelledResponse, cancelled.body.data);
    expect(await models().Booking.findById(bookingId).lean()).toMatchObject({
      notes: 'Please call first',
      cancelReason: 'Travelling that week',
      cancellationType: 'buyer_request',
      cancelNotes: 'Will book again',
      refundAmountMinor: 20000,
    });

    for (const viewer of [buyer, as(app, offer.seller)]) {
      const view = await viewer('GET', `/consultations/bookings/${bookingId}`);
      expect(view.body.data).toMatchObject({
        status: 'Cancelled',
        notes: 'Please call first',
        cancellation: { cancelledBy: 'buyer', reason: 'Travelling that week', cancellationType: 'buyer_request', notes: 'Will book again' },
      });
      expectSchema(BookingResponse, view.body.data);
    }
  });

  test('a cancel that says nothing answers nulls, and the seller cancelling is recorded as the seller', async () => {
    const offer = await givenOffer(app);
    const booked = await as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer, { notes: undefined }));
    const cancelled = await as(app, offer.seller)('POST', '/consultations/bookings/cancel', { bookingId: booked.body.data.referenceId });
    expect(cancelled.body.data).toMatchObject({
      cancelledBy: 'seller',
      reason: null,
      cancellationType: null,
      notes: null,
      refundAmount: 500,
    });
    expectSchema(BookingCancelledResponse, cancelled.body.data);
    const view = await as(app, offer.seller)('GET', `/consultations/bookings/${booked.body.data.bookingId}`);
    expect(view.body.data).toMatchObject({
      notes: null,
      cancellation: { cancelledBy: 'seller', reason: null, cancellationType: null, notes: null },
    });
  });
});
