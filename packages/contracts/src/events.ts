import { context, propagation } from '@opentelemetry/api';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { AdminActionRecordedData } from './admin-actions';

/**
 * Integration events: past tense; `type` (version 1) or `<type>.v<N>` (version N ≥ 2) is the
 * routing key on the `marketplace.events` topic exchange. Adding an optional field is compatible;
 * anything else a reader of the previous release could not read is a new `version`. Consumers parse
 * `data` tolerantly (unknown fields are dropped, not refused). Amounts are integer minor units.
 */

export { DEAD_LETTER_EXCHANGE, EVENTS_EXCHANGE, routingKeyOf } from './routing';

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

/**
 * Each paid Confirmed booking of a session: its buyer, what it cost (`paidMinor`, after any
 * coupon) and its list price (`listMinor`, before any discount).
 */
const SessionPayments = z.array(
  z.object({
    bookingId: z.string().min(1),
    buyerId: z.string().min(1),
    paidMinor: Minor.nonnegative(),
    listMinor: Minor.nonnegative(),
  }),
);

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
  /**
   * Added in place (compatible): each paid Confirmed booking of the session — its buyer, what it
   * cost (`paidMinor`, after any coupon) and its list price (`listMinor`, before any discount).
   * The review service counts a review only when the buyer paid enough of the list price itself
   * (its README). Absent (an older producer): `paidBuyerIds` alone decides.
   */
  payments: SessionPayments.optional(),
});

export const SessionNoShowData = z.object({
  sessionId: z.string().min(1),
  consultationId: z.string().min(1),
  sellerId: z.string().min(1).optional(),
  buyerIds: z.array(z.string().min(1)),
  markedAt: IsoTime.optional(),
  /** Added in place (compatible): the session's Confirmed bookings (the wallet captures their holds). */
  bookingIds: z.array(z.string().min(1)).optional(),
  /**
   * Added in place (compatible): the consultation's reference and the buyers who paid — a
   * buyer marked absent may still review the session (and dispute the no-show).
   */
  consultationReferenceId: z.string().min(1).optional(),
  paidBuyerIds: z.array(z.string().min(1)).optional(),
  /**
   * Added in place (compatible): as `consultation.session.completed`'s — a buyer marked absent
   * may review, and the review counts only as a customer's payment would.
   */
  payments: SessionPayments.optional(),
});

/**
 * The buyer disputes a no-show of their booking: the wallet holds the booking's capture back
 * until an admin decides (voids it, or lets it go on).
 */
export const BookingDisputedData = z.object({
  bookingId: z.string().min(1),
  sessionId: z.string().min(1),
  buyerId: z.string().min(1),
  sellerId: z.string().min(1),
  reason: z.string().min(1).max(1000),
  disputedAt: IsoTime,
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
  /**
   * Added in place (compatible): how much of `amountMinor` the buyer's wallet had received from
   * this seller by transfers (completed transfers seller → buyer, at most `amountMinor`): money
   * that went round from the seller and back is not a customer's payment. Absent (an older
   * producer): unknown, taken as 0.
   */
  sellerFundedMinor: Minor.nonnegative().optional(),
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

/**
 * Every event type and version with the schema of its `data`: the versioned registry of event
 * contracts. A released `type@version` never changes incompatibly (`scripts/contracts.mjs check`
 * compares it with `contracts/released/events/<type>@<version>.json`): adding an optional field
 * is compatible; anything a reader of the previous release could not read is a new version here,
 * published beside the old one until no consumer reads the old (docs/contracts.md).
 */
export const EVENT_CONTRACTS = {
  'identity.user.registered': { 1: UserRegisteredData },
  'consultation.booking.confirmed': { 1: BookingConfirmedData },
  'consultation.booking.cancelled': { 1: BookingCancelledData },
  'consultation.session.completed': { 1: SessionCompletedData },
  'consultation.session.no_show': { 1: SessionNoShowData },
  'consultation.booking.disputed': { 1: BookingDisputedData },
  'wallet.topup.completed': { 1: TopUpCompletedData },
  'wallet.payout.status_changed': { 1: PayoutStatusChangedData },
  'wallet.booking_refund.completed': { 1: BookingRefundCompletedData },
  'wallet.booking_payment.captured': { 1: BookingPaymentCapturedData },
  'review.created': { 1: ReviewCreatedData },
  'review.visibility_changed': { 1: ReviewVisibilityChangedData },
  'wallet.admin_action.recorded': { 1: AdminActionRecordedData },
  'consultation.admin_action.recorded': { 1: AdminActionRecordedData },
  'review.admin_action.recorded': { 1: AdminActionRecordedData },
  'catalog.admin_action.recorded': { 1: AdminActionRecordedData },
  'crm.admin_action.recorded': { 1: AdminActionRecordedData },
} as const satisfies EventRegistry;

/** Event contracts: type → version → schema of `data`. Tests may build their own (a v2 before it exists). */
export type EventRegistry = Readonly<Record<string, Readonly<Record<number, z.ZodType>>>>;

export type EventType = keyof typeof EVENT_CONTRACTS;
/** The versions of one type. */
export type EventVersion<T extends EventType> = keyof (typeof EVENT_CONTRACTS)[T] & number;

/** Every event type with the schema of its version 1 `data` (what every released consumer reads). */
export const EventDataSchemas = Object.fromEntries(Object.entries(EVENT_CONTRACTS).map(([type, versions]) => [type, versions[1]])) as {
  readonly [T in EventType]: (typeof EVENT_CONTRACTS)[T][1];
};

export type EventData<T extends EventType> = z.infer<(typeof EventDataSchemas)[T]>;
/** The data of one version of a type (a union over several versions). */
export type VersionedEventData<T extends EventType, V extends number> = z.infer<(typeof EVENT_CONTRACTS)[T][V & EventVersion<T>]>;
export const EVENT_TYPES = Object.keys(EVENT_CONTRACTS) as EventType[];

/** The schema of `data` for `type@version`, or undefined when the registry has none. */
export function eventDataSchema(type: string, version: number, registry: EventRegistry = EVENT_CONTRACTS): z.ZodType | undefined {
  return Object.hasOwn(registry, type) && Object.hasOwn(registry[type]!, version) ? registry[type]![version] : undefined;
}

/** Every `type@version` of a registry, in its order. */
export function eventContractList(registry: EventRegistry = EVENT_CONTRACTS): Array<{ type: string; version: number; schema: z.ZodType }> {
  return Object.entries(registry).flatMap(([type, versions]) =>
    Object.entries(versions).map(([version, schema]) => ({ type, version: Number(version), schema })),
  );
}

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

/** An event of type `T`, version 1 (`VersionedEvent` for another version). */
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

/** An event of type `T` in version(s) `V`. */
export type VersionedEvent<T extends EventType, V extends number> = 1 extends V
  ? [V] extends [1]
    ? IntegrationEvent<T>
    : Omit<IntegrationEvent<T>, 'data'> & { data: VersionedEventData<T, V> }
  : Omit<IntegrationEvent<T>, 'data'> & { data: VersionedEventData<T, V> };

export interface EventOrigin {
  source: string;
  correlationId?: string;
}

/** An event's origin and, for another version than 1, the version to make. */
export interface VersionedEventOrigin<V extends number> extends EventOrigin {
  version?: V;
}

/**
 * Builds an event, checking its data against the schema of the type's version (`origin.version`,
 * 1 unless said; a producer publishing two versions of one fact makes one event per version). It
 * carries the active trace context (`traceparent`, `tracestate`) when there is one.
 */
export function makeEvent<T extends EventType>(type: T, data: EventData<T>, origin: EventOrigin): IntegrationEvent<T>;
export function makeEvent<T extends EventType, V extends EventVersion<T>>(
  type: T,
  data: VersionedEventData<T, V>,
  origin: EventOrigin & { version: V },
): VersionedEvent<T, V>;
export function makeEvent(type: EventType, data: unknown, origin: VersionedEventOrigin<number>): IntegrationEvent {
  return makeEventOf(EVENT_CONTRACTS, type, data, origin);
}

/** `makeEvent` against a registry of one's own (tests of versions the platform has not released). */
export function makeEventOf(registry: EventRegistry, type: string, data: unknown, origin: VersionedEventOrigin<number>): IntegrationEvent {
  const version = origin.version ?? 1;
  const schema = eventDataSchema(type, version, registry);
  if (!schema) throw new Error(`No contract for the event ${type}@${version}`);
  const id = randomUUID();
  const event = {
    id,
    type: type as EventType,
    version,
    occurredAt: new Date().toISOString(),
    source: origin.source,
    correlationId: origin.correlationId ?? id,
    data: schema.parse(data),
  } as IntegrationEvent;
  const trace: { traceparent?: string; tracestate?: string } = {};
  propagation.inject(context.active(), trace);
  if (trace.traceparent) event.traceparent = trace.traceparent;
  if (trace.tracestate) event.tracestate = trace.tracestate;
  return event;
}

/**
 * Parses an envelope and the data of the expected type, read with the schema of the envelope's
 * version; `versions`: those the caller reads (1 unless said). Throws a ZodError on a bad message
 * or another version.
 */
export function parseEvent<T extends EventType>(type: T, raw: unknown): IntegrationEvent<T>;
export function parseEvent<T extends EventType, V extends EventVersion<T>>(
  type: T,
  raw: unknown,
  versions: readonly V[],
): VersionedEvent<T, V>;
export function parseEvent(type: EventType, raw: unknown, versions: readonly number[] = [1]): IntegrationEvent {
  const envelope = EventEnvelope.parse(raw);
  const refuse = (path: string, message: string, input: unknown): never => {
    throw new z.ZodError([{ code: 'custom', path: [path], message, input }]);
  };
  if (envelope.type !== type) refuse('type', `Expected ${type}, got ${envelope.type}`, envelope.type);
  if (!versions.includes(envelope.version))
    refuse('version', `Expected version ${versions.join(' or ')} of ${type}, got ${envelope.version}`, envelope.version);
  const schema = eventDataSchema(type, envelope.version);
  if (!schema) return refuse('version', `No contract for ${type}@${envelope.version}`, envelope.version);
  return { ...envelope, type, data: schema.parse(envelope.data) } as IntegrationEvent;
}
