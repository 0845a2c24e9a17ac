import { minorToMajor } from '@mkt/contracts';
import type { BookingDoc, SessionDoc } from '../db/booking.models';
import type { ConsultationDoc, PricingDoc, RuleSetDoc } from '../db/setup.models';

const iso = (date: Date | null | undefined) => (date ? date.toISOString() : null);

export function consultationView(c: ConsultationDoc, pricing: PricingDoc | null) {
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
  };
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
    status: b.status,
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
    refundAmount: b.refundAmountMinor === null || b.refundAmountMinor === undefined ? null : minorToMajor(b.refundAmountMinor),
    cancelledAt: iso(b.cancelledAt),
  };
}

export function bookingListItem(b: BookingDoc) {
  return {
    id: b._id,
    referenceId: b.referenceId,
    consultationTitle: b.consultationTitle,
    status: b.status,
    date: b.date,
    startTime: b.startTime,
    endTime: b.endTime,
    totalAmount: minorToMajor(b.totalAmountMinor),
    currency: b.currency,
    refundStatus: b.refundStatus ?? null,
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
