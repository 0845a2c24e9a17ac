import { context, propagation } from '@opentelemetry/api';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';

/**
 * Integration events: past tense, `type` is the routing key on the `marketplace.events` topic
 * exchange. Adding a field is compatible; a change of meaning is a new `version`. Consumers parse
 * `data` tolerantly (unknown fields are dropped, not refused). Amounts are integer minor units.
 */

export const EVENTS_EXCHANGE = 'marketplace.events';
export const DEAD_LETTER_EXCHANGE = 'marketplace.dlx';

export const Role = z.enum(['buyer', 'seller', 'admin']);
export type Role = z.infer<typeof Role>;

const Minor = z.number().int();
const IsoTime = z.string().datetime({ offset: true });

export const UserRegisteredData = z.object({
  userId: z.string().min(1),
  referenceId: z.string().min(1),
  role: Role,
  fullName: z.string(),
  email: z.string(),
});

export const BookingConfirmedData = z.object({
  bookingId: z.string().min(1),
  consultationId: z.string().min(1),
  sellerId: z.string().min(1),
  buyerId: z.string().min(1),
  totalAmountMinor: Minor.nonnegative(),
  currency: z.string().length(3),
  date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  startTime: z.string(),
  /** Added in place (compatible): the booked consultation's category. */
  consultationCategory: z.string().optional(),
});

export const BookingCancelledData = z.object({
  bookingId: z.string().min(1),
  sellerId: z.string().min(1),
  buyerId: z.string().min(1),
  refundAmountMinor: Minor.nonnegative(),
  /** Added in place (compatible): who cancelled, and what the booking cost. */
  cancelledBy: z.enum(['buyer', 'seller', 'admin']).optional(),
  totalAmountMinor: Minor.nonnegative().optional(),
  /**
   * Added in place (compatible): why the service itself cancelled, when nobody asked —
   * `session_expired` (the session was never held: full refund) or `voided_by_admin` (the wallet
   * already gave the whole amount back). A free string, so a later cause breaks no consumer.
   */
  cause: z.string().min(1).max(40).optional(),
});

export const SessionCompletedData = z.object({
  sessionId: z.string().min(1),
  consultationId: z.string().min(1),
  /** Added in place (compatible): the consultation's CON reference. */
  consultationReferenceId: z.string().optional(),
  sellerId: z.string().min(1),
  buyerIds: z.array(z.string().min(1)),
  endedAt: IsoTime,
  /** Added in place (compatible): the session's Confirmed bookings (the wallet captures their holds). */
  bookingIds: z.array(z.string().min(1)).optional(),
  /**
   * Added in place (compatible): the buyers of `buyerIds` who paid for their place (a Confirmed
   * booking with a total above 0). A review by a buyer who only booked free does not count in
   * the public rating. Absent (an older producer): every buyer counts as paying.
   */
  paidBuyerIds: z.array(z.string().min(1)).optional(),
});

export const SessionNoShowData = z.object({
  sessionId: z.string().min(1),
  consultationId: z.string().min(1),
  sellerId: z.string().min(1).optional(),
  buyerIds: z.array(z.string().min(1)),
  markedAt: IsoTime.optional(),
  /** Added in place (compatible): the session's Confirmed bookings (the wallet captures their holds). */
  bookingIds: z.array(z.string().min(1)).optional(),
});

/** A wallet record (top-up or payout) and the status it reached. */
const WalletStatusData = z.object({
  reference: z.string().min(1),
  userId: z.string().min(1),
  amountMinor: Minor.positive(),
  currency: z.string().length(3),
  status: z.string(),
});
export const TopUpCompletedData = WalletStatusData;
export const PayoutStatusChangedData = WalletStatusData;

/** A paid booking's hold was cancelled: `refundAmountMinor` went back to the buyer, the rest to the seller. */
export const BookingRefundCompletedData = z.object({
  bookingId: z.string().min(1),
  buyerId: z.string().min(1),
  sellerId: z.string().min(1),
  refundAmountMinor: Minor.nonnegative(),
  capturedAmountMinor: Minor.nonnegative(),
  currency: z.string().length(3),
  /**
   * Added in place (compatible): true when an admin voided the hold by hand (no cancellation
   * came first): the whole amount went back to the buyer; the consultation cancels the booking.
   */
  voidedByAdmin: z.boolean().optional(),
});

/** A paid booking was delivered (session completed or no-show): its hold went to the seller. */
export const BookingPaymentCapturedData = z.object({
  bookingId: z.string().min(1),
  buyerId: z.string().min(1),
  sellerId: z.string().min(1),
  amountMinor: Minor.nonnegative(),
  feeMinor: Minor.nonnegative(),
  currency: z.string().length(3),
});

export const ReviewCreatedData = z.object({
  reviewId: z.string().min(1),
  entityType: z.string().min(1),
  entityId: z.string().min(1),
  rating: z.number().int().min(1).max(5),
  /** Added in place (compatible): false for a review from a free booking, left out of the rating. Absent: true. */
  countsInRating: z.boolean().optional(),
});

/**
 * A review was hidden or shown again (`isActive`). `sequence` counts the review's visibility
 * changes (1, 2, …): a consumer applies a change only over a lower one, so a late or repeated
 * event never undoes a newer one. Carries the rating, so it stands alone even before
 * `review.created` has arrived.
 */
export const ReviewVisibilityChangedData = z.object({
  reviewId: z.string().min(1),
  entityType: z.string().min(1),
  entityId: z.string().min(1),
  rating: z.number().int().min(1).max(5),
  isActive: z.boolean(),
  sequence: z.number().int().positive(),
  /** Added in place (compatible): as in `review.created`. Absent: true. */
  countsInRating: z.boolean().optional(),
});

/** Every event type with the schema of its `data`. */
export const EventDataSchemas = {
  'identity.user.registered': UserRegisteredData,
  'consultation.booking.confirmed': BookingConfirmedData,
  'consultation.booking.cancelled': BookingCancelledData,
  'consultation.session.completed': SessionCompletedData,
  'consultation.session.no_show': SessionNoShowData,
  'wallet.topup.completed': TopUpCompletedData,
  'wallet.payout.status_changed': PayoutStatusChangedData,
  'wallet.booking_refund.completed': BookingRefundCompletedData,
  'wallet.booking_payment.captured': BookingPaymentCapturedData,
  'review.created': ReviewCreatedData,
  'review.visibility_changed': ReviewVisibilityChangedData,
} as const;

export type EventType = keyof typeof EventDataSchemas;
export type EventData<T extends EventType> = z.infer<(typeof EventDataSchemas)[T]>;
export const EVENT_TYPES = Object.keys(EventDataSchemas) as EventType[];

/** The envelope every event travels in; `data` is checked per type by `parseEvent`. */
export const EventEnvelope = z.object({
  id: z.string().uuid(),
  type: z.string().min(1),
  version: z.number().int().positive(),
  occurredAt: IsoTime,
  source: z.string().min(1),
  correlationId: z.string().min(1),
  data: z.unknown(),
});
export type EventEnvelope = z.infer<typeof EventEnvelope>;

export interface IntegrationEvent<T extends EventType = EventType> {
  id: string;
  type: T;
  version: number;
  occurredAt: string;
  source: string;
  correlationId: string;
  data: EventData<T>;
  /**
   * The W3C trace context active when the event was made (kept in the outbox document, sent as
   * the AMQP headers of the same names, not in the published body): a later publish, the
   * sweeper's after a crash, stays in the trace of the request that caused the event.
   */
  traceparent?: string;
  tracestate?: string;
}

export interface EventOrigin {
  source: string;
  correlationId?: string;
}

/**
 * Builds an event, checking its data against the type's schema. It carries the active trace
 * context (`traceparent`, `tracestate`) when there is one.
 */
export function makeEvent<T extends EventType>(type: T, data: EventData<T>, origin: EventOrigin): IntegrationEvent<T> {
  const id = randomUUID();
  const event: IntegrationEvent<T> = {
    id,
    type,
    version: 1,
    occurredAt: new Date().toISOString(),
    source: origin.source,
    correlationId: origin.correlationId ?? id,
    data: EventDataSchemas[type].parse(data) as EventData<T>,
  };
  const trace: { traceparent?: string; tracestate?: string } = {};
  propagation.inject(context.active(), trace);
  if (trace.traceparent) event.traceparent = trace.traceparent;
  if (trace.tracestate) event.tracestate = trace.tracestate;
  return event;
}

/** Parses an envelope and the data of the expected type; throws a ZodError on a bad message. */
export function parseEvent<T extends EventType>(type: T, raw: unknown): IntegrationEvent<T> {
  const envelope = EventEnvelope.parse(raw);
  if (envelope.type !== type) {
    throw new z.ZodError([{ code: 'custom', path: ['type'], message: `Expected ${type}, got ${envelope.type}`, input: envelope.type }]);
  }
  const data = EventDataSchemas[type].parse(envelope.data) as EventData<T>;
  return { ...envelope, type, data };
}
