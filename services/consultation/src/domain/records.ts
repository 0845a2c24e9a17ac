import type {
  AvailabilityRule,
  DeliveryMode,
  DurationType,
  IntegrationEvent,
  PricingStrategy,
  SessionStatus,
} from '@mkt/contracts/consultation';

// The records this service keeps, as the domain reads them (the schemas are `db/models.ts`).

export interface RuleSetDoc {
  _id: string;
  referenceId: string;
  sellerId: string;
  name: string;
  description: string;
  status: 'Active';
  timezone: string;
  durationType: DurationType;
  isDefault: boolean;
  metaData: { autoAccept: boolean; bufferTime: number; maxBookingsPerDay: number };
  availabilityRules: AvailabilityRule[];
  createdAt: Date;
  updatedAt: Date;
}

export interface PricingDoc {
  _id: string;
  referenceId: string;
  sellerId: string;
  basePriceMinor: number;
  currency: string;
  pricingStrategy: PricingStrategy;
  comparePriceMinor: number | null;
  isOnSale: boolean;
  isActive: boolean;
  createdAt: Date;
}

export interface DiscountDoc {
  _id: string;
  referenceId: string;
  sellerId: string;
  name: string;
  description: string;
  discountType: 'Percentage' | 'Fixed';
  /** A percentage, or minor units for Fixed. */
  discountValue: number;
  validFrom: Date;
  validTo: Date;
  couponCode: string;
  maxUses: number;
  /** How many uses one buyer may hold at once (absent on records from before it was kept: 1). */
  maxUsesPerBuyer?: number;
  uses: number;
  /** Bookings holding a use: makes taking and giving back a use idempotent. */
  usedBy: string[];
  /** Per buyer (`buyerUseKey`), the bookings of theirs holding a use: the per-buyer limit's guard. */
  buyerUses?: Record<string, string[]>;
  isActive: boolean;
  createdAt: Date;
}

export interface VisibilityRuleDoc {
  type: 'user_type' | 'location';
  condition: string;
  action: 'show' | 'hide';
  priority: number;
}
export interface VisibilityRuleSetDoc {
  _id: string;
  referenceId: string;
  sellerId: string;
  name: string;
  description: string;
  isDefault: boolean;
  isActive: boolean;
  validFrom: Date;
  validTo: Date;
  visibilityRules: VisibilityRuleDoc[];
  createdAt: Date;
}

export interface ConsultationDoc {
  _id: string;
  referenceId: string;
  sellerId: string;
  /** The seller's USR reference (from their token at creation): a booking may name the seller by it. Null on older records. */
  sellerRef?: string | null;
  title: string;
  description: string;
  duration: number;
  sessionType: 'OneToOne' | 'Group';
  maxCapacity: number;
  deliveryMode: DeliveryMode;
  timezone: string;
  language: string;
  category: string;
  subcategory: string[];
  tags: string[];
  ruleSetId: string;
  pricingId: string;
  currentStatus: 'Pending' | 'Approved';
  visibility: 'Hidden' | 'Published';
  averageRating: number;
  totalReviews: number;
  /** Moves on at every edit and approval (see `versionOf`); absent on records from before it was kept. */
  version?: number;
  /** An edit of the public text of an Approved consultation, waiting for an admin (see `decideEdit`). */
  pendingRevision?: PendingRevisionDoc | null;
  /** The outbox (an approval's audit entry until it is published). */
  pendingEvents?: IntegrationEvent[];
  createdAt: Date;
  updatedAt: Date;
}
/** The public text of a consultation: what an edit of an Approved one sends to review first. */
export const PUBLIC_TEXT_FIELDS = ['title', 'description', 'category', 'subcategory', 'tags', 'language'] as const;
export type PublicText = Partial<Pick<ConsultationDoc, (typeof PUBLIC_TEXT_FIELDS)[number]>>;
export interface PendingRevisionDoc {
  id: string;
  submittedAt: Date;
  /** The fields it changes, with their new values. */
  changes: PublicText;
}

/** How many consultations a seller has (see `MAX_CONSULTATIONS_PER_SELLER`). */
export interface SellerQuotaDoc {
  _id: string;
  consultations: number;
}

/**
 * Ratings, one entry per review (so a repeat changes nothing): made by `review.created` or by
 * the first `review.visibility_changed`, whichever comes first. A hidden review's entry stays,
 * `isActive: false`, out of the average; `visibilitySequence` is the latest change applied.
 */
export interface RatingEntryDoc {
  _id: string;
  consultationId: string;
  rating: number;
  isActive?: boolean;
  visibilitySequence?: number;
}

/**
 * Places are counted on one document per slot (and per day), keyed by what they count: the
 * guard `booked ≤ capacity − places` is in the update's filter, and a full place document
 * makes the upsert collide with itself — so of racing bookings for the last place, one wins.
 * `bookingIds` makes taking and giving back a place idempotent.
 */
export interface PlaceDoc {
  _id: string;
  consultationId: string;
  booked: number;
  bookingIds: string[];
  /** The slot's session left Scheduled (started, no-show, expired): it takes no booking again. */
  closed?: boolean;
}

/**
 * Pending: taking its places. PaymentPending: places taken, the wallet's hold not yet answered
 * (the sweep asks again, or gives it up at its deadline). Confirmed: paid (or free). Failed:
 * not paid or not placed; its places are given back.
 */
export type BookingStatus = 'Pending' | 'PaymentPending' | 'Confirmed' | 'Cancelled' | 'Failed';
/**
 * free: nothing to pay; pending: the wallet asked; voiding: given up (deadline or the client's
 * cancel), the wallet's void under way — no confirm can happen any more; held: the wallet holds
 * the total; refused/voided: never paid.
 */
export type PaymentState = 'free' | 'pending' | 'voiding' | 'held' | 'refused' | 'declined' | 'voided';

/** A buyer's dispute of a no-show: why, when, by whom. */
export interface BookingDispute {
  reason: string;
  at: Date;
  by: string;
}

export interface BookingDoc {
  _id: string;
  referenceId: string;
  consultationId: string;
  ruleSetId: string;
  sellerId: string;
  buyerId: string;
  /** The buyer's USR reference: the wallet opens their wallet by it if need be. */
  buyerRef: string;
  status: BookingStatus;
  payment: PaymentState;
  /** A PaymentPending booking is given up (voided at the wallet) from this moment. */
  paymentDeadline: Date | null;
  consultationTitle: string;
  date: string;
  startTime: string;
  endTime: string;
  startsAt: Date;
  endsAt: Date;
  slotKey: string;
  dayKey: string;
  places: number;
  participants: Array<{ fullName: string; email: string; phone: string }>;
  subTotalMinor: number;
  totalAmountMinor: number;
  currency: string;
  couponId: string | null;
  notes: string | null;
  sessionId: string | null;
  refundStatus: 'Pending' | 'Refunded' | null;
  refundAmountMinor: number | null;
  refundedAt: Date | null;
  cancelledBy: 'buyer' | 'seller' | 'admin' | null;
  cancelledAt: Date | null;
  /** What the cancel request said: `reason`, `cancellationType` and `notes`. */
  cancelReason: string | null;
  cancellationType: string | null;
  cancelNotes: string | null;
  /** Why the service cancelled it by itself (`session_expired`, `voided_by_admin`); null when someone asked. */
  cancelCause: string | null;
  /** The correlation id of the request that made it: its later events and the sweep's logs carry it. */
  correlationId: string | null;
  /**
   * The steps of its flow given back (compensated) once it was given up (Failed, Cancelled):
   * `confirm` (the session seat), `coupon`, `day`, `slot` — in that order, `slot` last. Absent on
   * a booking a version before the booking flow wrote (during a rolling update, or restored from
   * an older backup): none recorded (`givenBackSteps`).
   */
  compensated?: BookingStep[];
  /**
   * Set (true) while the booking is given up (Failed, Cancelled) and still owes a give-back;
   * removed in the write that records the last one (`slot`). Absent otherwise: the sweep finds
   * the give-backs owed by this field (and `slot` not recorded), through a sparse index whose size
   * is the work owed. The sweep also removes it where a process of a version before the flag
   * recorded `slot`, and sets it where such a process gave a booking up (`flagOwedGiveBacks`).
   */
  owed?: true;
  /**
   * When the sweep last read the booking to finish its give-back (absent: never). The sweep reads
   * the owed bookings least recently tried first and stamps the ones it reads, so bookings whose
   * give-back keeps failing take their turn after the others instead of filling the read's limit
   * every time. Removed with `owed`.
   */
  owedTriedAt?: Date;
  /**
   * When the sweep last read the booking, PaymentPending, to ask the wallet again (absent: never):
   * the same turn as `owedTriedAt`, so PaymentPending bookings whose retry keeps failing never keep
   * the others waiting for theirs (and for their payment deadline's void).
   */
  paymentTriedAt?: Date;
  pendingEvents: IntegrationEvent[];
  createdAt: Date;
  updatedAt: Date;
  /** The buyer disputes the session's no-show (null: not disputed). */
  dispute?: BookingDispute | null;
}
/** The steps of a booking's flow, in order (application/booking-steps.ts). */
export type BookingStep = 'slot' | 'day' | 'coupon' | 'hold' | 'confirm';

/** A booking as it is first written (the database stamps its times). */
export type NewBooking = Omit<BookingDoc, 'createdAt' | 'updatedAt'>;
/** A booking's record of what happens to it later (its session, refund, cancellation, give-backs), as a new booking holds it: none yet. */
export function newBookingOutcome(): Pick<
  BookingDoc,
  | 'sessionId'
  | 'refundStatus'
  | 'refundAmountMinor'
  | 'refundedAt'
  | 'cancelledBy'
  | 'cancelledAt'
  | 'cancelReason'
  | 'cancellationType'
  | 'cancelNotes'
  | 'cancelCause'
  | 'pendingEvents'
> &
  Required<Pick<BookingDoc, 'compensated'>> {
  return {
    sessionId: null,
    refundStatus: null,
    refundAmountMinor: null,
    refundedAt: null,
    cancelledBy: null,
    cancelledAt: null,
    cancelReason: null,
    cancellationType: null,
    cancelNotes: null,
    cancelCause: null,
    compensated: [],
    pendingEvents: [],
  };
}
/** What a booking's move expects of it still (its state; a dispute's absence): the move applies only while it holds. */
export type BookingGuard = Partial<Pick<BookingDoc, 'status' | 'payment' | 'dispute'>>;
/** The fields a booking's move sets (its time of change is stamped by the write). */
export type BookingChange = Partial<Omit<BookingDoc, '_id' | 'referenceId' | 'createdAt' | 'updatedAt' | 'pendingEvents'>>;

export interface SessionDoc {
  _id: string;
  referenceId: string;
  consultationId: string;
  sellerId: string;
  consultationTitle: string;
  startsAt: Date;
  endsAt: Date;
  /** The slot's place counter, closed when the session leaves Scheduled (older sessions: none stored). */
  slotKey: string | null;
  status: SessionStatus;
  bookingIds: string[];
  buyerIds: string[];
  participantCount: number;
  startedAt: Date | null;
  endedAt: Date | null;
  markedAt: Date | null;
  duration: number | null;
  notes: string | null;
  /** Marking a no-show: whether the seller tried to reach the client, and how (null: not said). */
  attemptedContact: boolean | null;
  contactMethod: string | null;
  sessionSummary: string | null;
  nextSteps: string | null;
  /** When the sweep found it never moved (status Expired). */
  expiredAt: Date | null;
  /** An Expired session whose Confirmed bookings are all cancelled (the sweep resumes until then). */
  expiryFinished: boolean;
  pendingEvents: IntegrationEvent[];
  createdAt: Date;
  updatedAt: Date;
}

/** A session's record of how it went (started, ended, marked, expired), as a new session holds it: nothing yet. */
export function newSessionOutcome(): Pick<
  SessionDoc,
  | 'startedAt'
  | 'endedAt'
  | 'markedAt'
  | 'duration'
  | 'notes'
  | 'attemptedContact'
  | 'contactMethod'
  | 'sessionSummary'
  | 'nextSteps'
  | 'expiredAt'
  | 'expiryFinished'
  | 'pendingEvents'
> {
  return {
    startedAt: null,
    endedAt: null,
    markedAt: null,
    duration: null,
    notes: null,
    attemptedContact: null,
    contactMethod: null,
    sessionSummary: null,
    nextSteps: null,
    expiredAt: null,
    expiryFinished: false,
    pendingEvents: [],
  };
}
