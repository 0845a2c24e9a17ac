import { formatMinor, minorToMajor } from '@mkt/contracts/consultation';
import type { ReceiptDocument } from '@mkt/kit/http';
import type { BookingReceiptAmounts } from '../domain/receipts';
import { versionOf } from '../domain/consultation-edits';
import { maxUsesPerBuyerOf, type CouponCheck } from '../domain/coupons';
import type {
  BookingDoc,
  BookingStatus,
  ConsultationDoc,
  DiscountDoc,
  PendingRevisionDoc,
  PricingDoc,
  RuleSetDoc,
  SessionDoc,
  VisibilityRuleSetDoc,
} from '../domain/records';

/** A date as the answers write it: a date the record always has is always a string. */
function iso(date: Date): string;
function iso(date: Date | null | undefined): string | null;
function iso(date: Date | null | undefined): string | null {
  return date ? date.toISOString() : null;
}

/**
 * A booking's status as answers show it: a Pending booking (still taking its places) is never
 * read (`readableBooking`, the listings' statuses), so showing one is a fault of ours.
 */
function shownStatus(status: BookingStatus): Exclude<BookingStatus, 'Pending'> {
  if (status === 'Pending') throw new Error('A Pending booking is never shown');
  return status;
}
const major = (minor: number | null | undefined) => (minor === null || minor === undefined ? null : minorToMajor(minor));

/**
 * A consultation. `withRevision` (its seller and admins only) adds `pendingRevision` — an edit of
 * its public text waiting for review, or null — and `version`, what an approval names (it moves
 * on when a revision is submitted). Nobody else learns of either.
 */
export function consultationView(c: ConsultationDoc, pricing: PricingDoc | null, withRevision = false) {
  return {
    id: c._id,
    referenceId: c.referenceId,
    title: c.title,
    description: c.description,
    duration: c.duration,
    sessionType: c.sessionType,
    maxCapacity: c.maxCapacity,
    deliveryMode: c.deliveryMode,
    timezone: c.timezone,
    language: c.language,
    category: c.category,
    subcategory: c.subcategory,
    tags: c.tags,
    ruleSetId: c.ruleSetId,
    pricingId: c.pricingId,
    sellerId: c.sellerId,
    currentStatus: c.currentStatus,
    visibility: c.visibility,
    pricing: pricing ? { basePrice: minorToMajor(pricing.basePriceMinor), currency: pricing.currency } : null,
    averageRating: c.averageRating,
    totalReviews: c.totalReviews,
    createdAt: iso(c.createdAt),
    updatedAt: iso(c.updatedAt),
    ...(withRevision ? consultationRevisionView(c) : {}),
  };
}

/** What only its seller and admins see of a consultation: the revision waiting for review and the version an approval names. */
export function consultationRevisionView(c: ConsultationDoc) {
  return { pendingRevision: pendingRevisionView(c.pendingRevision), version: versionOf(c) };
}

function pendingRevisionView(revision: PendingRevisionDoc | null | undefined) {
  return revision ? { id: revision.id, submittedAt: iso(revision.submittedAt), changes: revision.changes } : null;
}

export function consultationListItem(c: ConsultationDoc) {
  return {
    id: c._id,
    referenceId: c.referenceId,
    title: c.title,
    duration: c.duration,
    currentStatus: c.currentStatus,
    visibility: c.visibility,
    category: c.category,
  };
}

export function sessionListItem(s: SessionDoc) {
  return {
    id: s._id,
    referenceId: s.referenceId,
    consultationTitle: s.consultationTitle,
    consultationId: s.consultationId,
    status: s.status,
    startTime: iso(s.startsAt),
    endTime: iso(s.endsAt),
    participantCount: s.participantCount,
  };
}

export function bookingView(b: BookingDoc) {
  return {
    bookingId: b._id,
    referenceId: b.referenceId,
    status: shownStatus(b.status),
    consultationTitle: b.consultationTitle,
    consultationId: b.consultationId,
    date: b.date,
    startTime: b.startTime,
    endTime: b.endTime,
    subTotal: minorToMajor(b.subTotalMinor),
    totalAmount: minorToMajor(b.totalAmountMinor),
    currency: b.currency,
    sessionId: b.sessionId,
    paymentDeadline: iso(b.paymentDeadline),
    refundStatus: b.refundStatus ?? null,
    refundAmount: major(b.refundAmountMinor),
    cancelledAt: iso(b.cancelledAt),
    notes: b.notes ?? null,
    cancellation: b.status === 'Cancelled' ? { cancelledBy: b.cancelledBy ?? null, ...cancellationSaid(b) } : null,
  };
}

/** A booking's receipt (`BookingReceipt`): major units, as the booking shows its amounts. */
export function bookingReceiptView(b: BookingDoc, amounts: BookingReceiptAmounts) {
  return {
    bookingId: b._id,
    referenceId: b.referenceId,
    status: shownStatus(b.status),
    consultationId: b.consultationId,
    consultationTitle: b.consultationTitle,
    sellerId: b.sellerId,
    buyerId: b.buyerId,
    date: b.date,
    startTime: b.startTime,
    endTime: b.endTime,
    currency: b.currency,
    listPrice: minorToMajor(amounts.listPriceMinor),
    coupon: amounts.coupon,
    discount: minorToMajor(amounts.discountMinor),
    paid: minorToMajor(amounts.paidMinor),
    payment: b.payment,
    // The wallet keys a booking's hold by the booking id.
    walletHoldId: b.payment === 'free' ? null : b._id,
    refund: amounts.refund
      ? { status: amounts.refund.status, amount: major(amounts.refund.amountMinor), refundedAt: iso(amounts.refund.refundedAt) }
      : null,
    cancelledAt: iso(b.cancelledAt),
    createdAt: b.createdAt.toISOString(),
  };
}

/** The same receipt as the printable page shows it (plain text values; the page escapes them). */
export function bookingReceiptDocument(b: BookingDoc, amounts: BookingReceiptAmounts): ReceiptDocument {
  const money = (minor: number) => `${formatMinor(minor)} ${b.currency}`;
  const refund = amounts.refund;
  return {
    title: `Booking receipt ${b.referenceId}`,
    issuer: b.consultationTitle,
    sections: [
      {
        heading: 'Amounts',
        lines: [
          { label: 'List price', value: money(amounts.listPriceMinor) },
          ...(amounts.coupon ? [{ label: 'Coupon', value: `${amounts.coupon.code} (${amounts.coupon.name})` }] : []),
          { label: 'Discount', value: amounts.discountMinor ? `-${money(amounts.discountMinor)}` : money(0) },
          { label: 'Paid', value: money(amounts.paidMinor), strong: true },
          ...(refund
            ? [
                { label: 'Refund', value: refund.amountMinor === null ? '—' : money(refund.amountMinor), strong: true },
                { label: 'Refund status', value: refund.status ?? '—' },
                ...(refund.refundedAt ? [{ label: 'Refunded at', value: refund.refundedAt.toISOString() }] : []),
              ]
            : []),
        ],
      },
      {
        heading: 'Booking',
        lines: [
          { label: 'Status', value: b.status },
          { label: 'Slot', value: `${b.date} ${b.startTime}–${b.endTime}` },
          ...(b.cancelledAt ? [{ label: 'Cancelled at', value: b.cancelledAt.toISOString() }] : []),
          { label: 'Booked at', value: b.createdAt.toISOString() },
        ],
      },
      {
        heading: 'References',
        lines: [
          { label: 'Booking', value: `${b.referenceId} (${b._id})` },
          { label: 'Consultation', value: b.consultationId },
          { label: 'Seller', value: b.sellerId },
          { label: 'Buyer', value: b.buyerId },
          ...(b.payment === 'free' ? [] : [{ label: 'Wallet hold', value: b._id }]),
        ],
      },
    ],
  };
}

/** What the cancel request said, as it was kept (records from before it was kept: null). */
function cancellationSaid(b: BookingDoc) {
  return { reason: b.cancelReason ?? null, cancellationType: b.cancellationType ?? null, notes: b.cancelNotes ?? null };
}

/** The answer to a cancel: the refund, and who cancelled with what they said. */
export function cancelledView(b: BookingDoc) {
  return {
    bookingId: b._id,
    status: shownStatus(b.status),
    refundStatus: b.refundStatus,
    refundAmount: minorToMajor(b.refundAmountMinor ?? 0),
    cancelledAt: iso(b.cancelledAt),
    cancelledBy: b.cancelledBy!,
    ...cancellationSaid(b),
  };
}

export function noShowView(s: SessionDoc) {
  return {
    sessionId: s._id,
    status: s.status,
    markedAt: iso(s.markedAt),
    attemptedContact: s.attemptedContact ?? null,
    contactMethod: s.contactMethod ?? null,
  };
}

export function bookingListItem(b: BookingDoc) {
  return {
    id: b._id,
    referenceId: b.referenceId,
    consultationTitle: b.consultationTitle,
    status: shownStatus(b.status),
    date: b.date,
    startTime: b.startTime,
    endTime: b.endTime,
    totalAmount: minorToMajor(b.totalAmountMinor),
    currency: b.currency,
    refundStatus: b.refundStatus ?? null,
    disputed: Boolean(b.dispute),
  };
}

export function ruleSetView(r: RuleSetDoc) {
  return {
    id: r._id,
    referenceId: r.referenceId,
    name: r.name,
    description: r.description,
    status: r.status,
    timezone: r.timezone,
    durationType: r.durationType,
    isDefault: r.isDefault,
    metaData: r.metaData,
    availabilityRules: r.availabilityRules,
    createdAt: iso(r.createdAt),
  };
}

/** A rule set in the listing, with how much it is used. */
export function ruleSetListItem({ set, bookings, utilization }: { set: RuleSetDoc; bookings: number; utilization: number }) {
  return { id: set._id, referenceId: set.referenceId, name: set.name, status: set.status, bookings, utilization, timezone: set.timezone };
}

/** A pricing record with every field of the interface's Pricing resource. */
export function pricingView(p: PricingDoc) {
  return {
    id: p._id,
    referenceId: p.referenceId,
    basePrice: minorToMajor(p.basePriceMinor),
    currency: p.currency,
    pricingStrategy: p.pricingStrategy,
    comparePrice: major(p.comparePriceMinor),
    isOnSale: p.isOnSale,
    isActive: p.isActive,
    createdAt: iso(p.createdAt),
  };
}

/** A promotional discount as its seller sees it (a Fixed value in major units; no use counts). */
export function discountView(d: DiscountDoc) {
  return {
    id: d._id,
    referenceId: d.referenceId,
    name: d.name,
    description: d.description,
    couponCode: d.couponCode,
    discountType: d.discountType,
    discountValue: d.discountType === 'Fixed' ? minorToMajor(d.discountValue) : d.discountValue,
    validFrom: iso(d.validFrom),
    validTo: iso(d.validTo),
    maxUses: d.maxUses,
    maxUsesPerBuyer: maxUsesPerBuyerOf(d),
    isActive: d.isActive,
  };
}

export function visibilityRuleSetView(v: VisibilityRuleSetDoc) {
  return {
    id: v._id,
    referenceId: v.referenceId,
    name: v.name,
    description: v.description,
    isDefault: v.isDefault,
    isActive: v.isActive,
    validFrom: iso(v.validFrom),
    validTo: iso(v.validTo),
    visibilityRules: v.visibilityRules.map(({ type, condition, action, priority }) => ({ type, condition, action, priority })),
    createdAt: iso(v.createdAt),
  };
}

/** validate-coupon's answer: a code that cannot be used shows nothing of itself (`discount` null). */
export function couponCheckView(check: CouponCheck & { usedByUser: boolean }) {
  const { problem, discount, quote } = check;
  return {
    valid: problem === null,
    ...(problem ? { reason: problem } : {}),
    discountType: discount?.discountType ?? null,
    discountValue: discount ? (discount.discountType === 'Fixed' ? minorToMajor(discount.discountValue) : discount.discountValue) : null,
    finalPrice: minorToMajor(quote.finalMinor),
    originalPrice: minorToMajor(quote.originalMinor),
    savings: minorToMajor(quote.savingsMinor),
    currency: check.currency,
    usedByUser: check.usedByUser,
  };
}

/** A consultation in the admins' approval queue: a Pending one, or an Approved one's pending revision. */
export function approvalQueueItem(c: ConsultationDoc) {
  const revision = c.currentStatus === 'Approved' ? (c.pendingRevision ?? null) : null;
  return {
    kind: revision ? ('revision' as const) : ('consultation' as const),
    consultationId: c._id,
    referenceId: c.referenceId,
    sellerId: c.sellerId,
    title: c.title,
    version: versionOf(c),
    revisionId: revision?.id ?? null,
    changes: revision ? { ...revision.changes } : null,
    waitingSince: (revision?.submittedAt ?? c.updatedAt).toISOString(),
  };
}
