import { Schema, type Connection } from 'mongoose';
import { freeFormArrayField, pendingEventsField } from '@mkt/kit/bus';
import { idempotencyRecordSchema, windowedCounterSchema, type IdempotencyRecordDoc, type WindowedCounterDoc } from '@mkt/kit/db';
import type {
  BookingDoc,
  ConsultationDoc,
  DiscountDoc,
  PlaceDoc,
  PricingDoc,
  RatingEntryDoc,
  RuleSetDoc,
  SellerQuotaDoc,
  SessionDoc,
  VisibilityRuleSetDoc,
} from '../domain/records';

// The schemas of the consultation database; `consultationModels` binds them to a connection.

const timestamps = { timestamps: true, versionKey: false } as const;

/** The name of the bookings' sparse index on `owed` (the sweep's give-back read hints it; 0004-owed-give-backs builds it). */
export const OWED_INDEX = 'owed_1';

/**
 * The PaymentPending bookings' turn in the sweep: never asked again by the sweep first (no
 * `paymentTriedAt`), then the least recently asked, then the oldest move. The sweep's read sorts by
 * it and the index `WAITING_INDEX` has these keys in this order.
 */
export const WAITING_TURN = { paymentTriedAt: 1, updatedAt: 1, _id: 1 } as const;
/** The name of the bookings' partial index of that turn (the sweep's PaymentPending read hints it; 0005-waiting-turn-index builds it). */
export const WAITING_INDEX = 'payment_pending_turn';

/**
 * The listings' order (`GET /consultations/bookings`, `GET /consultations/sessions`), newest slot
 * first; each listing index ends with these keys, so a page is read in order, not sorted in memory.
 */
export const BOOKING_LIST_ORDER = { startsAt: -1, _id: -1 } as const;
/** The disputed bookings in the listing's order (an admin's queue of disputes reads it). */
export const DISPUTED_INDEX = 'disputed_by_startsAt';
/**
 * What makes a booking disputed, as the listing asks it and as the disputed index's partial
 * filter holds it: a dispute is an object, `null` (or absent) otherwise. The read asks this very
 * predicate, so a server's subset check accepts the partial index for it.
 */
export const DISPUTED = { dispute: { $type: 'object' } } as const;
export const SESSION_LIST_ORDER = { startsAt: -1, _id: -1 } as const;

/** The name of the sessions' index the session sweep's overdue reads hint (0006-listing-sweep-indexes builds it). */
export const OVERDUE_INDEX = 'status_1_endsAt_1';
/** The name of the sessions' partial index of the Expired ones by `expiryFinished` (the sweep's resume read hints it). */
export const EXPIRY_INDEX = 'expired_by_finished';

const ruleSetSchema = new Schema<RuleSetDoc>(
  {
    _id: String,
    referenceId: { type: String, required: true, unique: true },
    sellerId: { type: String, required: true, index: true },
    name: String,
    description: String,
    status: { type: String, default: 'Active' },
    timezone: String,
    durationType: String,
    isDefault: Boolean,
    metaData: { type: Schema.Types.Mixed, required: true },
    availabilityRules: freeFormArrayField,
  },
  timestamps,
);

const pricingSchema = new Schema<PricingDoc>(
  {
    _id: String,
    referenceId: { type: String, required: true, unique: true },
    sellerId: { type: String, required: true, index: true },
    basePriceMinor: Number,
    currency: String,
    pricingStrategy: String,
    comparePriceMinor: { type: Number, default: null },
    isOnSale: Boolean,
    isActive: Boolean,
  },
  timestamps,
);

const discountSchema = new Schema<DiscountDoc>(
  {
    _id: String,
    referenceId: { type: String, required: true, unique: true },
    sellerId: { type: String, required: true },
    name: String,
    description: String,
    discountType: String,
    discountValue: Number,
    validFrom: Date,
    validTo: Date,
    couponCode: { type: String, required: true },
    maxUses: Number,
    maxUsesPerBuyer: { type: Number, default: 1 },
    uses: { type: Number, default: 0 },
    usedBy: { type: [String], default: [] },
    buyerUses: { type: Schema.Types.Mixed, default: () => ({}) },
    isActive: Boolean,
  },
  timestamps,
);
discountSchema.index({ sellerId: 1, couponCode: 1 }, { unique: true });

/** Coupon checks of one user in one minute (`_id` = `user|2030-05-01T10:00`), for the throttle. */
const couponCheckSchema = windowedCounterSchema();

const visibilityRuleSetSchema = new Schema<VisibilityRuleSetDoc>(
  {
    _id: String,
    referenceId: { type: String, required: true, unique: true },
    sellerId: { type: String, required: true, index: true },
    name: String,
    description: String,
    isDefault: Boolean,
    isActive: Boolean,
    validFrom: Date,
    validTo: Date,
    visibilityRules: freeFormArrayField,
  },
  timestamps,
);

const consultationSchema = new Schema<ConsultationDoc>(
  {
    _id: String,
    referenceId: { type: String, required: true, unique: true },
    sellerId: { type: String, required: true, index: true },
    sellerRef: { type: String, default: null },
    title: String,
    description: String,
    duration: Number,
    sessionType: String,
    maxCapacity: Number,
    deliveryMode: String,
    timezone: String,
    language: String,
    category: String,
    subcategory: [String],
    tags: [String],
    ruleSetId: { type: String, required: true, index: true },
    pricingId: String,
    currentStatus: { type: String, default: 'Pending' },
    visibility: { type: String, default: 'Hidden' },
    averageRating: { type: Number, default: 0 },
    totalReviews: { type: Number, default: 0 },
    pendingRevision: { type: Schema.Types.Mixed, default: undefined },
    version: { type: Number, default: 1 },
    /** The outbox: an approval's audit entry, pushed by the approval's own write. */
    pendingEvents: pendingEventsField,
  },
  timestamps,
);
consultationSchema.index({ currentStatus: 1, visibility: 1, createdAt: -1 });
// The admins' approval queue: Pending ones by their last change, and pending revisions (only
// consultations that have one are in this sparse index), without a scan.
consultationSchema.index({ currentStatus: 1, updatedAt: 1 });
consultationSchema.index({ 'pendingRevision.submittedAt': 1 }, { sparse: true });

const ratingEntrySchema = new Schema<RatingEntryDoc>(
  { _id: String, consultationId: { type: String, index: true }, rating: Number, isActive: Boolean, visibilitySequence: Number },
  { versionKey: false },
);

const placeSchema = new Schema<PlaceDoc>(
  {
    _id: String,
    consultationId: String,
    booked: { type: Number, default: 0 },
    bookingIds: { type: [String], default: [] },
    closed: { type: Boolean, default: false },
  },
  { versionKey: false },
);

const bookingSchema = new Schema<BookingDoc>(
  {
    _id: String,
    referenceId: { type: String, required: true, unique: true },
    consultationId: { type: String, required: true },
    ruleSetId: { type: String, required: true, index: true },
    // `sellerId`, `buyerId` and `status` are the first keys of the listing's indexes (below),
    // which serve every read of them a single-field index served.
    sellerId: { type: String, required: true },
    buyerId: { type: String, required: true },
    buyerRef: { type: String, default: '' },
    status: { type: String, required: true },
    payment: { type: String, default: 'free' },
    paymentDeadline: { type: Date, default: null },
    consultationTitle: String,
    date: String,
    startTime: String,
    endTime: String,
    startsAt: Date,
    endsAt: Date,
    slotKey: String,
    dayKey: String,
    places: Number,
    participants: freeFormArrayField,
    subTotalMinor: Number,
    totalAmountMinor: Number,
    currency: String,
    couponId: { type: String, default: null },
    notes: { type: String, default: null },
    sessionId: { type: String, default: null },
    refundStatus: { type: String, default: null },
    refundAmountMinor: { type: Number, default: null },
    refundedAt: { type: Date, default: null },
    cancelledBy: { type: String, default: null },
    cancelledAt: { type: Date, default: null },
    cancelReason: { type: String, default: null },
    cancellationType: { type: String, default: null },
    cancelNotes: { type: String, default: null },
    cancelCause: { type: String, default: null },
    dispute: { type: Schema.Types.Mixed, default: null },
    correlationId: { type: String, default: null },
    compensated: { type: [String], default: [] },
    owed: { type: Boolean },
    owedTriedAt: { type: Date },
    paymentTriedAt: { type: Date },
    pendingEvents: pendingEventsField,
  },
  { timestamps: true, versionKey: false },
);
/** The given-up bookings still owing a give-back, and only those (`owed` is absent otherwise): what the sweep reads. */
bookingSchema.index({ owed: 1 }, { sparse: true, name: OWED_INDEX });
/**
 * The PaymentPending bookings, and only those, in the sweep's turn: its read walks them in order
 * and checks its `updatedAt` bound on the keys, so it stops at its limit instead of fetching and
 * sorting every booking waiting for the wallet on each sweep (thousands while the wallet is away).
 */
bookingSchema.index(WAITING_TURN, { name: WAITING_INDEX, partialFilterExpression: { status: 'PaymentPending' } });
/**
 * The listing, newest slot first: a user's page (`$or` of buyer and seller) walks the first two,
 * one per branch, merged in order; an admin's (statuses only) walks the third, one range per
 * status, merged. Each stops at the page instead of sorting the user's or everyone's history.
 */
bookingSchema.index({ buyerId: 1, ...BOOKING_LIST_ORDER });
bookingSchema.index({ sellerId: 1, ...BOOKING_LIST_ORDER });
bookingSchema.index({ status: 1, ...BOOKING_LIST_ORDER });
/**
 * An admin's disputed queue (`disputed=true`, statuses only): the disputed bookings and only
 * those, newest slot first, the status checked on the keys. Through the statuses' index above it
 * walked every booking of the statuses and skipped the undisputed: its cost grew with the history,
 * where disputes are few.
 */
bookingSchema.index({ ...BOOKING_LIST_ORDER, status: 1 }, { name: DISPUTED_INDEX, partialFilterExpression: DISPUTED });
/**
 * A session's Confirmed bookings (its moves, its expiry and its events read them): by session, not
 * by walking every Confirmed booking.
 */
bookingSchema.index({ sessionId: 1, status: 1 });
/**
 * A coupon's uses (`validateCoupon` counts a user's): only the bookings with a coupon are in it (a
 * coupon id is a non-empty string, `null` otherwise). The partial filter is a comparison, not a
 * `$type`: a server uses a partial index only for a query whose filter implies it, and an equality
 * on a string implies `$gt: ''` but not `$type: 'string'`.
 */
bookingSchema.index({ couponId: 1, status: 1 }, { partialFilterExpression: { couponId: { $gt: '' } } });

const sessionSchema = new Schema<SessionDoc>(
  {
    _id: String,
    referenceId: { type: String, required: true, unique: true },
    consultationId: { type: String, required: true },
    // The first key of the listing's index by seller (below), which serves what a single-field index did.
    sellerId: { type: String, required: true },
    consultationTitle: String,
    startsAt: { type: Date, required: true },
    endsAt: Date,
    slotKey: { type: String, default: null },
    status: { type: String, default: 'Scheduled' },
    bookingIds: { type: [String], default: [] },
    buyerIds: { type: [String], default: [] },
    participantCount: { type: Number, default: 0 },
    startedAt: { type: Date, default: null },
    endedAt: { type: Date, default: null },
    markedAt: { type: Date, default: null },
    duration: { type: Number, default: null },
    notes: { type: String, default: null },
    attemptedContact: { type: Boolean, default: null },
    contactMethod: { type: String, default: null },
    sessionSummary: { type: String, default: null },
    nextSteps: { type: String, default: null },
    expiredAt: { type: Date, default: null },
    expiryFinished: { type: Boolean, default: false },
    pendingEvents: pendingEventsField,
  },
  { timestamps: true, versionKey: false },
);
sessionSchema.index({ consultationId: 1, startsAt: 1 }, { unique: true });
/** The session sweep's overdue reads (`status`, `endsAt` before its bound): only the overdue ones of that status. */
sessionSchema.index({ status: 1, endsAt: 1 }, { name: OVERDUE_INDEX });
/**
 * The Expired sessions by `expiryFinished`: the sweep's resume read (`$ne: true`) reads the keys
 * of the unfinished ones only, however many expiries are finished. Partial on the read's own
 * `status` (equality), so a server can use it for that filter as it is.
 */
sessionSchema.index({ expiryFinished: 1 }, { name: EXPIRY_INDEX, partialFilterExpression: { status: 'Expired' } });
/**
 * The listing, newest slot first: a user's page (`$or` of seller and participant) walks the first
 * two, merged in order; an admin's walks the third (a status) or the fourth (every session).
 */
sessionSchema.index({ sellerId: 1, ...SESSION_LIST_ORDER });
sessionSchema.index({ buyerIds: 1, ...SESSION_LIST_ORDER });
sessionSchema.index({ status: 1, ...SESSION_LIST_ORDER });
sessionSchema.index(SESSION_LIST_ORDER);

/**
 * How many consultations a seller has (`_id` = seller id), for `MAX_CONSULTATIONS_PER_SELLER`: the
 * limit is in the filter of the increment, so racing creations never pass it.
 */
const sellerQuotaSchema = new Schema<SellerQuotaDoc>({ _id: String, consultations: { type: Number, default: 0 } }, { versionKey: false });

/** `Idempotency-Key`s of booking requests (`_id` = `user:booking:key`), kit's idempotent requests. */
const bookingRequestKeySchema = idempotencyRecordSchema();

/**
 * The service's models on `db` (its own connection, kit's `createDatabase`). Nothing here is
 * process-global: two services in one test process
 * bind their models to their own connections.
 */
export function consultationModels(db: Connection) {
  return {
    RuleSet: db.model<RuleSetDoc>('RuleSet', ruleSetSchema, 'availability_rule_sets'),
    Pricing: db.model<PricingDoc>('Pricing', pricingSchema, 'pricing'),
    Discount: db.model<DiscountDoc>('Discount', discountSchema, 'promotional_discounts'),
    CouponCheck: db.model<WindowedCounterDoc>('CouponCheck', couponCheckSchema, 'coupon_checks'),
    VisibilityRuleSet: db.model<VisibilityRuleSetDoc>('VisibilityRuleSet', visibilityRuleSetSchema, 'visibility_rule_sets'),
    Consultation: db.model<ConsultationDoc>('Consultation', consultationSchema, 'consultations'),
    SellerQuota: db.model<SellerQuotaDoc>('SellerQuota', sellerQuotaSchema, 'seller_quotas'),
    RatingEntry: db.model<RatingEntryDoc>('RatingEntry', ratingEntrySchema, 'rating_entries'),
    SlotPlace: db.model<PlaceDoc>('SlotPlace', placeSchema, 'slot_places'),
    DayPlace: db.model<PlaceDoc>('DayPlace', placeSchema.clone(), 'day_places'),
    Booking: db.model<BookingDoc>('Booking', bookingSchema, 'bookings'),
    Session: db.model<SessionDoc>('Session', sessionSchema, 'sessions'),
    BookingRequestKey: db.model<IdempotencyRecordDoc>('BookingRequestKey', bookingRequestKeySchema, 'booking_request_keys'),
  };
}
export type ConsultationModels = ReturnType<typeof consultationModels>;
