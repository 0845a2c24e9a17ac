import type { AuthenticatedUser } from '@mkt/kit/http';
import {
  newBookingOutcome,
  newSessionOutcome,
  type BookingDoc,
  type ConsultationDoc,
  type DiscountDoc,
  type PricingDoc,
  type RuleSetDoc,
  type SessionDoc,
} from '../../src/domain/records';

// Records for the unit tests of domain/ (no server): each with what a rule reads, overridable.

export const ZONE = 'Africa/Addis_Ababa';
export const T0 = new Date('2030-05-06T06:00:00.000Z'); // a Monday, 09:00 in Addis Ababa

export const user = (role: AuthenticatedUser['role'], id = `${role}-1`): AuthenticatedUser => ({
  id,
  ref: `MKT-USR-${id.toUpperCase()}`,
  role,
  email: `${id}@example.com`,
  name: id,
});
export const buyer = user('buyer');
export const seller = user('seller');
export const admin = user('admin');

export function consultation(fields: Partial<ConsultationDoc> = {}): ConsultationDoc {
  return {
    _id: 'con_1',
    referenceId: 'MKT-CON-1',
    sellerId: seller.id,
    sellerRef: seller.ref,
    title: 'Career coaching',
    description: 'One hour',
    duration: 60,
    sessionType: 'Group',
    maxCapacity: 2,
    deliveryMode: 'Online',
    timezone: ZONE,
    language: 'Amharic',
    category: 'Career',
    subcategory: [],
    tags: [],
    ruleSetId: 'rs-1',
    pricingId: 'pr_1',
    currentStatus: 'Approved',
    visibility: 'Published',
    averageRating: 0,
    totalReviews: 0,
    createdAt: T0,
    updatedAt: T0,
    ...fields,
  };
}

export function ruleSet(fields: Partial<RuleSetDoc> = {}): RuleSetDoc {
  const weekdays = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
  return {
    _id: 'rs-1',
    referenceId: 'MKT-AVL-RST-1',
    sellerId: seller.id,
    name: 'Every day',
    description: '',
    status: 'Active',
    timezone: ZONE,
    durationType: 'Indefinite',
    isDefault: true,
    metaData: { autoAccept: true, bufferTime: 0, maxBookingsPerDay: 50 },
    availabilityRules: weekdays.map((weekday) => ({
      type: 'weekly',
      weekday,
      intervals: [{ start_time: '09:00:00', end_time: '17:00:00', enabled: true }],
    })) as unknown as RuleSetDoc['availabilityRules'],
    createdAt: T0,
    updatedAt: T0,
    ...fields,
  };
}

export function pricing(fields: Partial<PricingDoc> = {}): PricingDoc {
  return {
    _id: 'pr_1',
    referenceId: 'PR_1',
    sellerId: seller.id,
    basePriceMinor: 500_00,
    currency: 'ETB',
    pricingStrategy: 'Fixed',
    comparePriceMinor: null,
    isOnSale: false,
    isActive: true,
    createdAt: T0,
    ...fields,
  };
}

export function discount(fields: Partial<DiscountDoc> = {}): DiscountDoc {
  return {
    _id: 'pd_1',
    referenceId: 'PD_1',
    sellerId: seller.id,
    name: 'Spring',
    description: '',
    discountType: 'Percentage',
    discountValue: 20,
    validFrom: new Date(T0.getTime() - 86_400_000),
    validTo: new Date(T0.getTime() + 30 * 86_400_000),
    couponCode: 'SPRING',
    maxUses: 10,
    uses: 0,
    usedBy: [],
    isActive: true,
    createdAt: T0,
    ...fields,
  };
}

export function booking(fields: Partial<BookingDoc> = {}): BookingDoc {
  const startsAt = new Date(T0.getTime() + 7 * 86_400_000);
  return {
    _id: 'bk_1',
    referenceId: 'BK_1',
    consultationId: 'con_1',
    ruleSetId: 'rs-1',
    sellerId: seller.id,
    buyerId: buyer.id,
    buyerRef: buyer.ref,
    status: 'Confirmed',
    payment: 'held',
    paymentDeadline: null,
    consultationTitle: 'Career coaching',
    date: '2030-05-13',
    startTime: '09:00',
    endTime: '10:00',
    startsAt,
    endsAt: new Date(startsAt.getTime() + 3_600_000),
    slotKey: `con_1|${startsAt.toISOString()}`,
    dayKey: 'con_1|2030-05-13',
    places: 1,
    participants: [{ fullName: 'Sara Tesfaye', email: 'sara@example.com', phone: '+251911223344' }],
    subTotalMinor: 500_00,
    totalAmountMinor: 500_00,
    currency: 'ETB',
    couponId: null,
    notes: null,
    ...newBookingOutcome(),
    sessionId: 'ses_1',
    correlationId: 'corr-1',
    createdAt: T0,
    updatedAt: T0,
    ...fields,
  };
}

export function session(fields: Partial<SessionDoc> = {}): SessionDoc {
  const startsAt = new Date(T0.getTime() + 3_600_000);
  return {
    _id: 'ses_1',
    referenceId: 'SES_1',
    consultationId: 'con_1',
    sellerId: seller.id,
    consultationTitle: 'Career coaching',
    startsAt,
    endsAt: new Date(startsAt.getTime() + 3_600_000),
    slotKey: null,
    status: 'Scheduled',
    bookingIds: ['bk_1'],
    buyerIds: [buyer.id],
    participantCount: 1,
    ...newSessionOutcome(),
    createdAt: T0,
    updatedAt: T0,
    ...fields,
  };
}

/** The error a decision throws (or undefined when it decides), as `{status, code, path}`. */
export function refusal(decide: () => unknown): { status: number; code: string; path?: string } | undefined {
  try {
    decide();
    return undefined;
  } catch (err) {
    const e = err as { status: number; code: string; items?: Array<{ path: string }> };
    return { status: e.status, code: e.code, ...(e.items?.[0]?.path ? { path: e.items[0].path } : {}) };
  }
}
