import { DateTime } from 'luxon';
import { call } from '@mkt/infra';
import { eventually, startSystem, type System } from './system';

let system: System;
beforeAll(async () => {
  system = await startSystem();
}, 90_000);
afterAll(() => system?.stop());

interface Session {
  token: string;
  id: string;
  ref: string;
}

const api = (session?: Session) => (method: string, path: string, body?: object) =>
  call(system.gateway, method, path, { token: session?.token, body });

async function register(role: 'buyer' | 'seller', fullName: string): Promise<Session> {
  const res = await api()('POST', '/v1/auth/register', {
    email: `${role}-${Math.random().toString(36).slice(2)}@example.com`,
    password: 'a long password',
    fullName,
    role,
  });
  return { token: res.body.data.accessToken, id: res.body.data.user.id, ref: res.body.data.user.referenceId };
}

describe('the marketplace through the gateway', () => {
  test('a seller offers a consultation, a buyer books it, the CRM sees it, the session ends, the buyer reviews it', async () => {
    const login = await api()('POST', '/v1/auth/login', system.admin);
    const admin = { token: login.body.data.accessToken } as Session;
    const seller = await register('seller', 'Abebe Kebede');
    const buyer = await register('buyer', 'Sara Tesfaye');
    const zone = 'Africa/Addis_Ababa';

    const ruleSet = await api(seller)('POST', '/consultations/availability-rule-sets/rule-sets', {
      name: 'Every day',
      timezone: zone,
      availabilityRules: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'].map((weekday) => ({
        type: 'weekly',
        weekday,
        intervals: [{ start_time: '09:00:00', end_time: '12:00:00', enabled: true }],
      })),
    });
    const pricing = await api(seller)('POST', '/consultations/pricing', { basePrice: 750, currency: 'ETB' });
    const consultation = await api(seller)('POST', '/consultations', {
      title: 'Business plan review',
      duration: 60,
      sessionType: 'OneToOne',
      deliveryMode: 'Online',
      timezone: zone,
      language: 'Amharic',
      category: 'Business',
      ruleSetId: ruleSet.body.data.id,
      pricingId: pricing.body.data.id,
    });
    expect(consultation.status).toBe(200);
    const consultationId = consultation.body.data.id;
    expect((await api(admin)('POST', `/consultations/${consultationId}/approve`)).body.data.visibility).toBe('Published');

    const date = DateTime.now().setZone(zone).plus({ days: 3 }).toFormat('yyyy-MM-dd');
    const slots = await api()('GET', `/consultations/${consultationId}/slots?from=${date}&to=${date}`);
    expect(slots.body.data.slots.map((s: { startTime: string }) => s.startTime)).toEqual(['09:00', '10:00', '11:00']);
    const booking = await api(buyer)('POST', '/consultations/bookings', {
      SellerId: seller.id,
      consultationId,
      ruleSetId: ruleSet.body.data.id,
      date,
      startTime: '09:00',
      endTime: '10:00',
      participants: [{ fullName: 'Sara Tesfaye', email: 'sara@example.com', phone: '+251911223344' }],
      subTotal: 750,
      totalAmount: 750,
      currency: 'ETB',
    });
    expect(booking.body.data.status).toBe('Confirmed');

    const crm = await eventually(
      () => api(seller)('GET', `/customers/seller/${seller.id}`),
      (res) => res.body.data?.total === 1,
    );
    expect(crm.ms).toBeLessThan(1_000);
    expect(crm.value.body.data.customers[0]).toMatchObject({ buyerName: 'Sara Tesfaye', totalBookings: 1, totalSpent: 750 });

    const sessionId = booking.body.data.sessionId;
    expect((await api(seller)('POST', `/consultations/sessions/${sessionId}/start`, {})).body.data.status).toBe('In Progress');
    expect((await api(seller)('POST', `/consultations/sessions/${sessionId}/end`, { sessionSummary: 'Good plan' })).body.data.status).toBe(
      'Completed',
    );

    const stranger = await register('buyer', 'Someone Else');
    const review = {
      entityType: 'consultation_service',
      entityId: consultation.body.data.referenceId,
      rating: 5,
      comment: 'Clear and practical',
    };
    const eligible = await eventually(
      () => api(buyer)('GET', `/reviews/consultation/${consultationId}/status`),
      (res) => res.body.data?.canReview === true,
    );
    expect(eligible.ms).toBeLessThan(1_000);
    expect((await api(buyer)('POST', '/reviews', review)).status).toBe(200);
    expect((await api(stranger)('POST', '/reviews', review)).status).toBe(422);
    const listed = await api()('GET', `/reviews/by-entity?entityType=consultation_service&entityId=${consultationId}`);
    expect(listed.body.data).toMatchObject({
      averageRating: 5,
      totalReviews: 1,
      reviews: [{ reviewerName: 'Sara Tesfaye', comment: 'Clear and practical' }],
    });
    const rated = await eventually(
      () => api()('GET', `/consultations/${consultationId}`),
      (res) => res.body.data?.totalReviews === 1,
    );
    expect(rated.value.body.data).toMatchObject({ averageRating: 5, totalReviews: 1 });
  });

  test('a cancelled booking leaves exact totals in the CRM', async () => {
    const login = await api()('POST', '/v1/auth/login', system.admin);
    const admin = { token: login.body.data.accessToken } as Session;
    const seller = await register('seller', 'Chaltu');
    const buyer = await register('buyer', 'Dawit');
    const zone = 'Africa/Addis_Ababa';
    const ruleSet = await api(seller)('POST', '/consultations/availability-rule-sets/rule-sets', {
      name: 'Mornings',
      timezone: zone,
      availabilityRules: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'].map((weekday) => ({
        type: 'weekly',
        weekday,
        intervals: [{ start_time: '09:00:00', end_time: '11:00:00', enabled: true }],
      })),
    });
    const pricing = await api(seller)('POST', '/consultations/pricing', { basePrice: 100, currency: 'ETB' });
    const c = await api(seller)('POST', '/consultations', {
      title: 'Tutoring',
      duration: 60,
      sessionType: 'OneToOne',
      deliveryMode: 'Online',
      timezone: zone,
      language: 'English',
      category: 'Education',
      ruleSetId: ruleSet.body.data.id,
      pricingId: pricing.body.data.id,
    });
    await api(admin)('POST', `/consultations/${c.body.data.id}/approve`);
    const date = DateTime.now().setZone(zone).plus({ days: 2 }).toFormat('yyyy-MM-dd');
    const book = (startTime: string, endTime: string) =>
      api(buyer)('POST', '/consultations/bookings', {
        SellerId: seller.id,
        consultationId: c.body.data.id,
        ruleSetId: ruleSet.body.data.id,
        date,
        startTime,
        endTime,
        participants: [{ fullName: 'Dawit', email: 'dawit@example.com', phone: '+251911000000' }],
        subTotal: 100,
        totalAmount: 100,
        currency: 'ETB',
      });
    await book('09:00', '10:00');
    const second = await book('10:00', '11:00');
    await api(buyer)('POST', '/consultations/bookings/cancel', { bookingId: second.body.data.bookingId, refundAmount: 60 });
    const crm = await eventually(
      () => api(seller)('GET', `/customers/seller/${seller.id}`),
      (res) => res.body.data?.customers?.[0]?.totalBookings === 1 && res.body.data.customers[0].totalSpent === 140,
    );
    expect(crm.value.body.data.customers[0]).toMatchObject({ totalBookings: 1, totalSpent: 140 });
  });
});
