import { DateTime } from 'luxon';
import { MarketplaceClient } from '@mkt/client';
import { call } from '@mkt/infra';
import { waitForSlotStart } from './fixtures';
import { eventually, startSystem, type System } from './system';

// Every request goes through the project's SDK (@mkt/client), one signed-in client per user;
// the assertions read each answer as `{ status, body }`.

let system: System;
beforeAll(async () => {
  system = await startSystem();
}, 90_000);
afterAll(() => system?.stop());

interface Session {
  token: string;
  id: string;
  ref: string;
  email: string;
  role: 'buyer' | 'seller' | 'admin';
  sdk: MarketplaceClient;
}

const client = () => new MarketplaceClient({ baseUrl: system.gateway });
/** The signed-in user's calls (a client without a token for none). */
const api = (session?: Session) => (session ? session.sdk : client()).api;
/** An SDK call's answer as the assertions read it: the status, and the envelope or the error's body. */
async function answer(made: Promise<{ data?: unknown; error?: unknown; response: Response }>) {
  const { data, error, response } = await made;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { status: response.status, body: (data ?? error) as any };
}
const WEEK = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;

async function register(role: 'buyer' | 'seller', fullName: string): Promise<Session> {
  const email = `${role}-${Math.random().toString(36).slice(2)}@example.com`;
  const sdk = client();
  const data = await sdk.register({ email, password: 'a long password', fullName, role });
  return { token: data.accessToken, id: data.user.id, ref: data.user.referenceId, email, role, sdk };
}

/** Money for paid bookings: a top-up paid on the sandbox hosted checkout, through the SDK. */
async function topUp(user: Session, amountMajor: number): Promise<void> {
  const { data } = await user.sdk.ok(
    user.sdk.api.POST('/wallets/users/{userReferenceId}/topup', {
      params: { path: { userReferenceId: user.ref } },
      body: { amount: amountMajor, paymentMethod: 'Chapa', redirectUrl: 'http://localhost:3000/done' },
    }),
  );
  await user.sdk.payInSandbox(data.paymentUrl);
}

async function signInAdmin(): Promise<Session> {
  const sdk = client();
  const data = await sdk.signIn(system.admin.email, system.admin.password);
  return { token: data.accessToken, id: data.user.id, ref: data.user.referenceId, email: system.admin.email, role: 'admin', sdk };
}

const SLOT_MINUTES = 5;

/**
 * The one slot of a rule set: the first whole minute at least 20 s from now, time enough to set
 * up and book it (the next day's 00:00 when that would cross midnight). A session ends only once
 * its slot has begun.
 */
function soonSlot(zone: string) {
  let start = DateTime.now().setZone(zone).plus({ seconds: 20, minutes: 1 }).startOf('minute');
  if (start.plus({ minutes: SLOT_MINUTES }).toISODate() !== start.toISODate()) start = start.plus({ days: 1 }).startOf('day');
  const end = start.plus({ minutes: SLOT_MINUTES });
  return {
    date: start.toFormat('yyyy-MM-dd'),
    startTime: start.toFormat('HH:mm:ss'),
    endTime: end.toFormat('HH:mm:ss'),
    startsAt: start.toJSDate(),
    endsAt: end.toJSDate(),
  };
}

const walletOf = async (session: Session) => (await answer(api(session).GET('/v1/wallet'))).body.data;

describe('the marketplace through the gateway', () => {
  test('a seller offers a consultation, a buyer books it, the CRM sees it, the session ends, the buyer reviews it', async () => {
    const admin = await signInAdmin();
    const seller = await register('seller', 'Abebe Kebede');
    const buyer = await register('buyer', 'Sara Tesfaye');
    const zone = 'Africa/Addis_Ababa';
    // Bookings are paid: the buyer tops up through the sandbox hosted checkout first.
    await eventually(
      () => answer(api(buyer).GET('/v1/wallet')),
      (res) => res.status === 200,
    );
    await topUp(buyer, 1000);
    // A session is started from 15 minutes before its slot and ended once it has begun: the slot
    // begins in under a minute and a half.
    const slot = soonSlot(zone);

    const ruleSet = await answer(
      api(seller).POST('/consultations/availability-rule-sets/rule-sets', {
        body: {
          name: 'Every day',
          timezone: zone,
          availabilityRules: WEEK.map((weekday) => ({
            type: 'weekly' as const,
            weekday,
            intervals: [{ start_time: slot.startTime, end_time: slot.endTime, enabled: true }],
          })),
        },
      }),
    );
    const pricing = await answer(api(seller).POST('/consultations/pricing', { body: { basePrice: 750, currency: 'ETB' } }));
    const consultation = await answer(
      api(seller).POST('/consultations', {
        body: {
          title: 'Business plan review',
          duration: SLOT_MINUTES,
          sessionType: 'OneToOne',
          deliveryMode: 'Online',
          timezone: zone,
          language: 'Amharic',
          category: 'Business',
          ruleSetId: ruleSet.body.data.id,
          pricingId: pricing.body.data.id,
        },
      }),
    );
    expect(consultation.status).toBe(200);
    const consultationId = consultation.body.data.id;
    expect(
      (
        await answer(
          api(admin).POST('/consultations/{id}/approve', {
            params: { path: { id: consultationId } },
            body: { version: consultation.body.data.version },
          }),
        )
      ).body.data.visibility,
    ).toBe('Published');

    const { date } = slot;
    const slots = await answer(
      api().GET('/consultations/{id}/slots', { params: { path: { id: consultationId }, query: { from: date, to: date } } }),
    );
    expect(slots.body.data.slots.map((s: { startTime: string }) => s.startTime)).toEqual([slot.startTime.slice(0, 5)]);
    const booking = await answer(
      api(buyer).POST('/consultations/bookings', {
        body: {
          SellerId: seller.id,
          consultationId,
          ruleSetId: ruleSet.body.data.id,
          date,
          startTime: slot.startTime.slice(0, 5),
          endTime: slot.endTime.slice(0, 5),
          participants: [{ fullName: 'Sara Tesfaye', email: 'sara@example.com', phone: '+251911223344' }],
          subTotal: 750,
          totalAmount: 750,
          currency: 'ETB',
        },
      }),
    );
    expect(booking.body.data.status).toBe('Confirmed');
    expect(await walletOf(buyer)).toMatchObject({ etbAvailableBalance: 250, heldBalance: 750 });

    const crm = await eventually(
      () => answer(api(seller).GET('/customers/seller/{sellerId}', { params: { path: { sellerId: seller.id } } })),
      // The relationship appears before its totals are recomputed: wait for the totals.
      (res) => res.body.data?.total === 1 && res.body.data.customers[0].totalBookings === 1,
    );
    expect(crm.value.body.data.customers[0]).toMatchObject({ buyerName: 'Sara Tesfaye', totalBookings: 1, totalSpent: 750 });

    const sessionId = booking.body.data.sessionId;
    const sessionPath = { params: { path: { id: sessionId } } };
    expect((await answer(api(seller).POST('/consultations/sessions/{id}/start', { ...sessionPath, body: {} }))).body.data.status).toBe(
      'In Progress',
    );
    await waitForSlotStart(slot.startsAt);
    expect(
      (await answer(api(seller).POST('/consultations/sessions/{id}/end', { ...sessionPath, body: { sessionSummary: 'Good plan' } }))).body
        .data.status,
    ).toBe('Completed');
    // Delivered: the capture of the held 750 is decided at once and carried out once the slot has
    // ended (a seller is never paid before the slot is over), by the wallet's sweep.
    const hold = await eventually(
      () => answer(api(admin).GET('/wallets/booking-holds/{bookingId}', { params: { path: { bookingId: booking.body.data.bookingId } } })),
      (res) => res.body.data?.settlement === 'capture',
      15_000,
    );
    expect(hold.value.body.data).toMatchObject({ status: 'Settling', amountMinor: 750_00, dueAt: slot.endsAt.toISOString() });
    expect(await walletOf(seller)).toMatchObject({ etbAvailableBalance: 0, heldBalance: 0 });
    expect(await walletOf(buyer)).toMatchObject({ etbAvailableBalance: 250, heldBalance: 750 });

    const stranger = await register('buyer', 'Someone Else');
    const review = {
      entityType: 'consultation_service' as const,
      entityId: consultation.body.data.referenceId,
      rating: 5,
      comment: 'Clear and practical',
    };
    const eligible = await eventually(
      () => answer(api(buyer).GET('/reviews/consultation/{id}/status', { params: { path: { id: consultationId } } })),
      (res) => res.body.data?.canReview === true,
    );
    expect(eligible.value.body.data).toMatchObject({ canReview: true, sessionCompleted: true });
    expect((await answer(api(buyer).POST('/reviews', { body: review }))).status).toBe(200);
    expect((await answer(api(stranger).POST('/reviews', { body: review }))).status).toBe(422);
    const listed = await answer(
      api().GET('/reviews/by-entity', { params: { query: { entityType: 'consultation_service', entityId: consultationId } } }),
    );
    expect(listed.body.data).toMatchObject({
      averageRating: 5,
      totalReviews: 1,
      reviews: [{ reviewerName: 'Sara Tesfaye', comment: 'Clear and practical' }],
    });
    const rated = await eventually(
      () => answer(api().GET('/consultations/{id}', { params: { path: { id: consultationId } } })),
      (res) => res.body.data?.totalReviews === 1,
    );
    expect(rated.value.body.data).toMatchObject({ averageRating: 5, totalReviews: 1 });
  }, 180_000);

  test('a cancelled booking leaves exact totals in the CRM', async () => {
    const admin = await signInAdmin();
    const seller = await register('seller', 'Chaltu');
    const buyer = await register('buyer', 'Dawit');
    const zone = 'Africa/Addis_Ababa';
    await eventually(
      () => answer(api(buyer).GET('/v1/wallet')),
      (res) => res.status === 200,
    );
    await topUp(buyer, 200);
    const ruleSet = await answer(
      api(seller).POST('/consultations/availability-rule-sets/rule-sets', {
        body: {
          name: 'Mornings',
          timezone: zone,
          availabilityRules: WEEK.map((weekday) => ({
            type: 'weekly' as const,
            weekday,
            intervals: [{ start_time: '09:00:00', end_time: '11:00:00', enabled: true }],
          })),
        },
      }),
    );
    const pricing = await answer(api(seller).POST('/consultations/pricing', { body: { basePrice: 100, currency: 'ETB' } }));
    const c = await answer(
      api(seller).POST('/consultations', {
        body: {
          title: 'Tutoring',
          duration: 60,
          sessionType: 'OneToOne',
          deliveryMode: 'Online',
          timezone: zone,
          language: 'English',
          category: 'Education',
          ruleSetId: ruleSet.body.data.id,
          pricingId: pricing.body.data.id,
        },
      }),
    );
    await answer(
      api(admin).POST('/consultations/{id}/approve', { params: { path: { id: c.body.data.id } }, body: { version: c.body.data.version } }),
    );
    const date = DateTime.now().setZone(zone).plus({ days: 2 }).toFormat('yyyy-MM-dd');
    const book = (startTime: string, endTime: string) =>
      answer(
        api(buyer).POST('/consultations/bookings', {
          body: {
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
          },
        }),
      );
    await book('09:00', '10:00');
    const second = await book('10:00', '11:00');
    await answer(api(buyer).POST('/consultations/bookings/cancel', { body: { bookingId: second.body.data.bookingId, refundAmount: 60 } }));
    const refunded = await eventually(
      () => answer(api(buyer).GET('/consultations/bookings/{id}', { params: { path: { id: second.body.data.bookingId } } })),
      (res) => res.body.data?.refundStatus === 'Refunded',
      15_000,
    );
    expect(refunded.value.body.data).toMatchObject({ status: 'Cancelled', refundStatus: 'Refunded', refundAmount: 60 });
    expect(await walletOf(buyer)).toMatchObject({ etbAvailableBalance: 60, heldBalance: 100 });
    expect(await walletOf(seller)).toMatchObject({ etbAvailableBalance: 40 });
    const crm = await eventually(
      () => answer(api(seller).GET('/customers/seller/{sellerId}', { params: { path: { sellerId: seller.id } } })),
      (res) => res.body.data?.customers?.[0]?.totalBookings === 1 && res.body.data.customers[0].totalSpent === 140,
    );
    expect(crm.value.body.data.customers[0]).toMatchObject({ totalBookings: 1, totalSpent: 140 });
  });
});

describe('paid bookings through the gateway', () => {
  test('booking without the money is 422 insufficient_funds and takes no place', async () => {
    const admin = await signInAdmin();
    const seller = await register('seller', 'Hanna');
    const broke = await register('buyer', 'Yonas');
    const zone = 'Africa/Addis_Ababa';
    const ruleSet = await answer(
      api(seller).POST('/consultations/availability-rule-sets/rule-sets', {
        body: {
          name: 'Mornings',
          timezone: zone,
          availabilityRules: WEEK.map((weekday) => ({
            type: 'weekly' as const,
            weekday,
            intervals: [{ start_time: '09:00:00', end_time: '10:00:00', enabled: true }],
          })),
        },
      }),
    );
    const pricing = await answer(api(seller).POST('/consultations/pricing', { body: { basePrice: 300, currency: 'ETB' } }));
    const c = await answer(
      api(seller).POST('/consultations', {
        body: {
          title: 'Mentoring',
          duration: 60,
          sessionType: 'OneToOne',
          deliveryMode: 'Online',
          timezone: zone,
          language: 'English',
          category: 'Education',
          ruleSetId: ruleSet.body.data.id,
          pricingId: pricing.body.data.id,
        },
      }),
    );
    await answer(
      api(admin).POST('/consultations/{id}/approve', { params: { path: { id: c.body.data.id } }, body: { version: c.body.data.version } }),
    );
    const date = DateTime.now().setZone(zone).plus({ days: 4 }).toFormat('yyyy-MM-dd');
    const res = await answer(
      api(broke).POST('/consultations/bookings', {
        body: {
          SellerId: seller.id,
          consultationId: c.body.data.id,
          ruleSetId: ruleSet.body.data.id,
          date,
          startTime: '09:00',
          endTime: '10:00',
          participants: [{ fullName: 'Yonas', email: 'yonas@example.com', phone: '+251911000001' }],
          subTotal: 300,
          totalAmount: 300,
          currency: 'ETB',
        },
      }),
    );
    expect(res.status).toBe(422);
    expect(res.body.errors[0].code).toBe('insufficient_funds');
    const slots = await answer(
      api().GET('/consultations/{id}/slots', { params: { path: { id: c.body.data.id }, query: { from: date, to: date } } }),
    );
    expect(slots.body.data.slots[0]).toMatchObject({ startTime: '09:00', remaining: 1 });
  });

  test('the wallet’s internal API is not reachable through the gateway', async () => {
    const buyer = await register('buyer', 'Outsider');
    for (const path of ['/internal/holds', '/wallets/../internal/holds', '/v1/wallet/../../internal/holds']) {
      // Paths the document does not have (that is the point): a request by hand, not the SDK.
      const res = await call(system.gateway, 'POST', path, {
        token: buyer.token,
        body: {
          bookingId: 'bk_x',
          buyerId: buyer.id,
          buyerRef: buyer.ref,
          sellerId: 'x',
          amountMinor: 1,
          currency: 'ETB',
        },
      });
      expect(res.status).toBe(404);
    }
  });
});
