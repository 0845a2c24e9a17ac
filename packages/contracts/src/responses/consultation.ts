import { z } from 'zod';
import {
  BookingStatus,
  ConsultationStatus,
  ConsultationVisibility,
  DeliveryMode,
  DiscountType,
  PricingStrategy,
  SessionStatus,
  SessionType,
  VisibilityRuleAction,
  VisibilityRuleType,
  Weekday,
} from '../consultation';
import {
  AverageRating,
  ClockTime,
  Count,
  CurrencyCode,
  Day,
  InternalId,
  Major,
  NullableTimestamp,
  PaginationResponse,
  PrefixedRef,
  Text,
  Timestamp,
  UnderscoreRef,
  UserId,
  UserRole,
  Uuid,
} from './common';

const ConsultationId = InternalId('con');
const CurrentStatus = ConsultationStatus;
const SessionStatusValue = SessionStatus;
const BookingStatusValue = BookingStatus;
const RefundStatus = z.enum(['Pending', 'Refunded']).meta({ id: 'RefundStatus' }).nullable();
const CancelledBy = UserRole;
/** What the cancel request said, kept with the booking. */
const Cancellation = {
  cancelledBy: CancelledBy,
  reason: Text('Travelling that week').nullable(),
  cancellationType: Text('buyer_request').nullable(),
  notes: Text('Will book again').nullable(),
};
const Title = Text('Business plan review');
const Minutes = (example: number) =>
  z
    .number()
    .int()
    .positive()
    .meta({ examples: [example] });
const HourMinuteSecond = z
  .string()
  .regex(/^([01]\d|2[0-3]):[0-5]\d:[0-5]\d$/)
  .meta({ examples: ['09:00:00'] });
const Zone = Text('Africa/Addis_Ababa');

/**
 * A consultation's version: one more at every edit and approval; an admin approves the one they
 * read (`ApproveConsultationBody`). 0 for a record from before versions were kept, until it is edited.
 */
const Version = z
  .number()
  .int()
  .min(0)
  .meta({ examples: [2] });

export const ConsultationCreatedResponse = z
  .strictObject({
    id: ConsultationId,
    referenceId: PrefixedRef('CON'),
    title: Title,
    duration: Minutes(60),
    sessionType: SessionType,
    currentStatus: CurrentStatus,
    visibility: ConsultationVisibility,
    createdAt: Timestamp,
    version: Version,
  })
  .meta({ id: 'ConsultationCreated' });

export const ConsultationListResponse = z
  .strictObject({
    consultations: z.array(
      z.strictObject({
        id: ConsultationId,
        referenceId: PrefixedRef('CON'),
        title: Title,
        duration: Minutes(60),
        currentStatus: CurrentStatus,
        visibility: ConsultationVisibility,
        category: Text('Business'),
      }),
    ),
    pagination: PaginationResponse,
  })
  .meta({ id: 'ConsultationList' });

/**
 * An edit of the public text of an Approved consultation, waiting for an admin: only its seller
 * and admins see it (absent for everyone else); the live text stays until it is approved.
 * `changes` holds the fields it would change.
 */
const PendingRevision = z
  .strictObject({
    id: Uuid,
    submittedAt: Timestamp,
    changes: z.strictObject({
      title: Title.optional(),
      description: Text('An hour on your plan: market, numbers, next steps').optional(),
      category: Text('Business').optional(),
      subcategory: z.array(Text('Start-ups')).optional(),
      tags: z.array(Text('planning')).optional(),
      language: Text('Amharic').optional(),
    }),
  })
  .nullable()
  .optional();

export const ConsultationResponse = z
  .strictObject({
    id: ConsultationId,
    referenceId: PrefixedRef('CON'),
    title: Title,
    description: Text('An hour on your plan: market, numbers, next steps'),
    duration: Minutes(60),
    sessionType: SessionType,
    maxCapacity: Minutes(1),
    deliveryMode: DeliveryMode,
    timezone: Zone,
    language: Text('Amharic'),
    category: Text('Business'),
    subcategory: z.array(Text('Start-ups')),
    tags: z.array(Text('planning')),
    ruleSetId: Uuid,
    pricingId: InternalId('pr'),
    sellerId: UserId,
    currentStatus: CurrentStatus,
    visibility: ConsultationVisibility,
    /** The price of the consultation's pricing record (null when that record is gone). */
    pricing: z.strictObject({ basePrice: Major(750), currency: CurrencyCode }).nullable(),
    averageRating: AverageRating,
    totalReviews: Count(2),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    pendingRevision: PendingRevision,
    /** Only for its seller and admins, as `pendingRevision`: what an approval names. */
    version: Version.optional(),
  })
  .meta({ id: 'Consultation' });

export const ConsultationUpdatedResponse = z
  .strictObject({
    id: ConsultationId,
    title: Title,
    duration: Minutes(60),
    currentStatus: CurrentStatus,
    visibility: ConsultationVisibility,
    updatedAt: Timestamp,
    pendingRevision: PendingRevision,
    version: Version,
  })
  .meta({ id: 'ConsultationUpdated' });

export const ConsultationApprovedResponse = z
  .strictObject({
    id: ConsultationId,
    referenceId: PrefixedRef('CON'),
    currentStatus: CurrentStatus,
    visibility: ConsultationVisibility,
    version: Version,
  })
  .meta({ id: 'ConsultationApproved' });

export const SlotsResponse = z
  .strictObject({
    slots: z.array(
      z.strictObject({
        date: Day,
        startTime: ClockTime,
        endTime: ClockTime,
        startsAt: Timestamp,
        endsAt: Timestamp,
        capacity: Minutes(1),
        remaining: Count(1),
      }),
    ),
    /** More slots exist in the range than one answer lists. */
    truncated: z.boolean(),
  })
  .meta({ id: 'Slots' });

export const SessionListResponse = z
  .strictObject({
    sessions: z.array(
      z.strictObject({
        id: InternalId('ses'),
        referenceId: UnderscoreRef('SES'),
        consultationTitle: Title,
        consultationId: ConsultationId,
        status: SessionStatusValue,
        startTime: Timestamp,
        endTime: Timestamp,
        participantCount: Count(1),
      }),
    ),
    pagination: PaginationResponse,
  })
  .meta({ id: 'SessionList' });

export const SessionStartedResponse = z
  .strictObject({
    sessionId: InternalId('ses'),
    status: SessionStatusValue,
    startedAt: NullableTimestamp,
  })
  .meta({ id: 'SessionStarted' });
export const SessionEndedResponse = z
  .strictObject({
    sessionId: InternalId('ses'),
    status: SessionStatusValue,
    endedAt: NullableTimestamp,
    duration: Count(60).nullable(),
  })
  .meta({ id: 'SessionEnded' });
export const SessionNoShowResponse = z
  .strictObject({
    sessionId: InternalId('ses'),
    status: SessionStatusValue,
    markedAt: NullableTimestamp,
    /** Whether the seller tried to reach the client, and how, as the no-show request said (null: not said). */
    attemptedContact: z.boolean().nullable(),
    contactMethod: Text('phone').nullable(),
  })
  .meta({ id: 'SessionNoShow' });

/** The buyer's dispute of a no-show, on each of their bookings of the session. */
export const SessionDisputedResponse = z
  .strictObject({
    sessionId: InternalId('ses'),
    bookingIds: z.array(InternalId('bk')),
    reason: Text('I joined on time; nobody was there'),
    disputedAt: Timestamp,
  })
  .meta({ id: 'SessionDisputed' });

export const BookingResponse = z
  .strictObject({
    bookingId: InternalId('bk'),
    referenceId: UnderscoreRef('BK'),
    status: BookingStatusValue,
    consultationTitle: Title,
    consultationId: ConsultationId,
    date: Day,
    startTime: ClockTime,
    endTime: ClockTime,
    subTotal: Major(750),
    totalAmount: Major(750),
    currency: CurrencyCode,
    /** The session the booking joined (none while its payment is pending or after it failed). */
    sessionId: InternalId('ses').nullable(),
    /** A PaymentPending booking is given up from then. */
    paymentDeadline: NullableTimestamp,
    refundStatus: RefundStatus,
    refundAmount: Major(60).nullable(),
    cancelledAt: NullableTimestamp,
    /** The buyer's notes sent with the booking (null: none). */
    notes: Text('First session').nullable(),
    /** Who cancelled and what they said; null while the booking is not cancelled. */
    cancellation: z.strictObject({ ...Cancellation, cancelledBy: CancelledBy.nullable() }).nullable(),
  })
  .meta({ id: 'Booking' });

/** Where a booking's payment stands at the wallet. */
const BookingPaymentState = z
  .enum(['free', 'pending', 'voiding', 'held', 'refused', 'declined', 'voided'])
  .meta({ id: 'BookingPaymentState' });

/**
 * The receipt of a booking: the list price, the coupon and its discount, what was paid, the
 * refund of a cancelled one as far as the consultation knows it, and the references to find it by.
 */
export const BookingReceiptResponse = z
  .strictObject({
    bookingId: InternalId('bk'),
    referenceId: UnderscoreRef('BK'),
    status: BookingStatusValue,
    consultationId: ConsultationId,
    consultationTitle: Title,
    sellerId: UserId,
    buyerId: UserId,
    date: Day,
    startTime: ClockTime,
    endTime: ClockTime,
    currency: CurrencyCode,
    /** The price before any coupon. */
    listPrice: Major(750),
    coupon: z.strictObject({ code: Text('LAUNCH10'), name: Text('Launch week') }).nullable(),
    discount: Major(0),
    /** What the buyer was charged (0 for a free booking). */
    paid: Major(750),
    /** How the payment stands: `free`, `held` at the wallet (settled after the session), or not taken. */
    payment: BookingPaymentState,
    /** The wallet's hold for this booking (keyed by the booking id); null for a free booking. */
    walletHoldId: InternalId('bk').nullable(),
    refund: z.strictObject({ status: RefundStatus, amount: Major(60).nullable(), refundedAt: NullableTimestamp }).nullable(),
    cancelledAt: NullableTimestamp,
    createdAt: Timestamp,
  })
  .meta({ id: 'BookingReceipt' });

export const BookingListResponse = z
  .strictObject({
    bookings: z.array(
      z.strictObject({
        id: InternalId('bk'),
        referenceId: UnderscoreRef('BK'),
        consultationTitle: Title,
        status: BookingStatusValue,
        date: Day,
        startTime: ClockTime,
        endTime: ClockTime,
        totalAmount: Major(750),
        currency: CurrencyCode,
        refundStatus: RefundStatus,
        /** The buyer disputes the session's no-show (the wallet holds the capture back for an admin). */
        disputed: z.boolean(),
      }),
    ),
    pagination: PaginationResponse,
  })
  .meta({ id: 'BookingList' });

export const BookingCancelledResponse = z
  .strictObject({
    bookingId: InternalId('bk'),
    status: BookingStatusValue,
    refundStatus: RefundStatus,
    refundAmount: Major(60),
    cancelledAt: NullableTimestamp,
    ...Cancellation,
  })
  .meta({ id: 'BookingCancelled' });

export const RuleSetCreatedResponse = z
  .strictObject({
    id: Uuid,
    referenceId: PrefixedRef('AVL-RST'),
    name: Text('Mornings'),
    status: z.literal('Active'),
    timezone: Zone,
    createdAt: Timestamp,
  })
  .meta({ id: 'RuleSetCreated' });

/** A rule set in the owner's listing, with how much of it is booked. */
export const RuleSetSummaryResponse = z
  .strictObject({
    id: Uuid,
    referenceId: PrefixedRef('AVL-RST'),
    name: Text('Mornings'),
    status: z.literal('Active'),
    /** Confirmed bookings of consultations on this rule set. */
    bookings: Count(4),
    /** Places booked in the next 28 days over the places offered then (a fraction). */
    utilization: z
      .number()
      .min(0)
      .max(1)
      .meta({ examples: [0.125] }),
    timezone: Zone,
  })
  .meta({ id: 'RuleSetSummary' });
export const RuleSetListResponse = z.array(RuleSetSummaryResponse).meta({ id: 'RuleSetList' });

export const RuleSetResponse = z
  .strictObject({
    id: Uuid,
    referenceId: PrefixedRef('AVL-RST'),
    name: Text('Mornings'),
    description: Text('Weekday mornings'),
    status: z.literal('Active'),
    timezone: Zone,
    durationType: z.literal('Indefinite'),
    isDefault: z.boolean(),
    metaData: z.strictObject({ autoAccept: z.boolean(), bufferTime: Count(0), maxBookingsPerDay: Count(50) }),
    availabilityRules: z.array(
      z.strictObject({
        type: z.literal('weekly'),
        weekday: Weekday,
        intervals: z.array(z.strictObject({ start_time: HourMinuteSecond, end_time: HourMinuteSecond, enabled: z.boolean() })),
      }),
    ),
    createdAt: Timestamp,
  })
  .meta({ id: 'RuleSet' });

export const PricingCreatedResponse = z
  .strictObject({
    id: InternalId('pr'),
    referenceId: UnderscoreRef('PR'),
    basePrice: Major(750),
    currency: CurrencyCode,
    pricingStrategy: PricingStrategy,
    /** The "was" price shown beside basePrice (null when not set). */
    comparePrice: Major(900).nullable(),
    isOnSale: z.boolean(),
    isActive: z.boolean(),
    createdAt: Timestamp,
  })
  .meta({ id: 'PricingCreated' });

export const DiscountCreatedResponse = z
  .strictObject({
    id: InternalId('pd'),
    referenceId: UnderscoreRef('PD'),
    name: Text('Launch week'),
    description: Text('10% off the first week'),
    couponCode: Text('LAUNCH10'),
    discountType: DiscountType,
    /** A percentage, or major units for a Fixed discount. */
    discountValue: z
      .number()
      .positive()
      .meta({ examples: [10] }),
    validFrom: Timestamp,
    validTo: Timestamp,
    maxUses: Count(100),
    /** How many uses one buyer may hold at once. */
    maxUsesPerBuyer: Count(1),
    isActive: z.boolean(),
  })
  .meta({ id: 'DiscountCreated' });

/** What a coupon would make of the consultation's price now; `reason` says why it does not apply. */
export const CouponQuoteResponse = z
  .strictObject({
    valid: z.boolean(),
    reason: Text('The coupon has expired').optional(),
    discountType: DiscountType.nullable(),
    discountValue: z
      .number()
      .positive()
      .meta({ examples: [10] })
      .nullable(),
    finalPrice: Major(675),
    originalPrice: Major(750),
    savings: Major(75),
    currency: CurrencyCode.nullable(),
    /**
     * The user the quote is for (`userId`, else the caller) holds a use of this coupon through a
     * booking of theirs (PaymentPending or Confirmed: a cancelled one gave its use back); false for
     * a code that cannot be used (it shows nothing of itself). Holding `maxUsesPerBuyer` uses, the
     * quote is `valid: false` for them.
     */
    usedByUser: z.boolean(),
  })
  .meta({ id: 'CouponQuote' });

export const VisibilityRuleSetCreatedResponse = z
  .strictObject({
    id: InternalId('vrs'),
    referenceId: UnderscoreRef('VRS'),
    name: Text('Buyers only'),
    description: Text('Hidden from sellers browsing'),
    isDefault: z.boolean(),
    isActive: z.boolean(),
    validFrom: Timestamp,
    validTo: Timestamp,
    visibilityRules: z.array(
      z.strictObject({
        type: VisibilityRuleType,
        condition: Text('seller'),
        action: VisibilityRuleAction,
        priority: Count(1),
      }),
    ),
    createdAt: Timestamp,
  })
  .meta({ id: 'VisibilityRuleSetCreated' });

export const VisibilityStatusResponse = z
  .strictObject({
    consultations: z.array(
      z.strictObject({
        consultationId: Text('con_k2j4h6g8f0d2s4a6'),
        visible: z.boolean(),
        reason: Text('Approved and published; no visibility rule set in force'),
      }),
    ),
  })
  .meta({ id: 'VisibilityStatus' });
