import {
  newInternalId,
  newReference,
  pageOffset,
  pagination,
  type CreateConsultationBody,
  type UpdateConsultationBody,
} from '@mkt/contracts';
import { InvalidState, NotFound, type AuthenticatedUser } from '@mkt/kit';
import { SlotPlace, DayPlace } from '../db/booking.models';
import { Consultation, Pricing, RuleSet, type ConsultationDoc, type PricingDoc, type RuleSetDoc } from '../db/setup.models';
import { assertOwner, assertSeller, findByKey, isAdmin, mustFind } from './access';
import { ForeignRecord } from './consultation.errors';
import { assertZone } from './setup';
import { localDateRange, localSlot, slotsBetween, type Schedule } from './slots';

const MAX_SLOT_RANGE_DAYS = 62;

export const isListed = (c: ConsultationDoc) => c.currentStatus === 'Approved' && c.visibility === 'Published';

export function scheduleOf(consultation: ConsultationDoc, ruleSet: RuleSetDoc): Schedule {
  return {
    timezone: ruleSet.timezone,
    rules: ruleSet.availabilityRules,
    durationMinutes: consultation.duration,
    bufferMinutes: ruleSet.metaData.bufferTime,
  };
}

export async function createConsultation(user: AuthenticatedUser, body: CreateConsultationBody): Promise<ConsultationDoc> {
  assertSeller(user);
  assertZone(body.timezone, 'timezone');
  const [ruleSet, pricing] = await Promise.all([findByKey(RuleSet, body.ruleSetId), findByKey(Pricing, body.pricingId)]);
  if (!ruleSet) throw new NotFound('Rule set');
  if (!pricing) throw new NotFound('Pricing');
  if (ruleSet.sellerId !== user.id) throw new ForeignRecord('ruleSetId', 'rule set');
  if (pricing.sellerId !== user.id) throw new ForeignRecord('pricingId', 'pricing');
  const doc = await Consultation.create({
    ...body,
    _id: newInternalId('con'),
    referenceId: newReference('CON'),
    sellerId: user.id,
    ruleSetId: ruleSet._id,
    pricingId: pricing._id,
    currentStatus: 'Pending',
    visibility: 'Hidden',
  });
  return doc.toObject();
}

/** Anyone sees Approved+Published ones; a seller also their own; an admin all. */
export async function listConsultations(
  user: AuthenticatedUser | undefined,
  query: { page: number; limit: number; status?: string; category?: string },
) {
  const listed = { currentStatus: 'Approved', visibility: 'Published' };
  const scope = isAdmin(user) ? {} : user ? { $or: [listed, { sellerId: user.id }] } : listed;
  const filter: Record<string, unknown> = { ...scope };
  if (query.status) filter.currentStatus = query.status;
  if (query.category) filter.category = query.category;
  const [items, total] = await Promise.all([
    Consultation.find(filter).sort({ createdAt: -1 }).skip(pageOffset(query)).limit(query.limit).lean<ConsultationDoc[]>(),
    Consultation.countDocuments(filter),
  ]);
  return { items, pagination: pagination(query, total) };
}

/** A consultation the caller may see: listed ones to anyone, others to their seller or an admin. */
export async function visibleConsultation(user: AuthenticatedUser | undefined, key: string): Promise<ConsultationDoc> {
  const consultation = await findByKey(Consultation, key);
  if (!consultation || (!isListed(consultation) && user?.id !== consultation.sellerId && !isAdmin(user)))
    throw new NotFound('Consultation');
  return consultation;
}

export async function consultationDetail(
  user: AuthenticatedUser | undefined,
  key: string,
): Promise<{ consultation: ConsultationDoc; pricing: PricingDoc | null }> {
  const consultation = await visibleConsultation(user, key);
  return { consultation, pricing: await Pricing.findById(consultation.pricingId).lean<PricingDoc>() };
}

export async function updateConsultation(user: AuthenticatedUser, key: string, body: UpdateConsultationBody): Promise<ConsultationDoc> {
  const consultation = await mustFind(Consultation, key, 'Consultation');
  assertOwner(user, consultation.sellerId, 'consultation');
  return (await Consultation.findOneAndUpdate({ _id: consultation._id }, { $set: body }, { new: true }).lean<ConsultationDoc>())!;
}

export async function approveConsultation(key: string): Promise<ConsultationDoc> {
  const consultation = await mustFind(Consultation, key, 'Consultation');
  const approved = await Consultation.findOneAndUpdate(
    { _id: consultation._id, currentStatus: 'Pending' },
    { $set: { currentStatus: 'Approved', visibility: 'Published' } },
    { new: true },
  ).lean<ConsultationDoc>();
  if (!approved) throw new InvalidState(`A ${consultation.currentStatus} consultation cannot be approved`);
  return approved;
}

/** Future slots between two local dates (the consultation's zone) with the places left. */
export async function freeSlots(user: AuthenticatedUser | undefined, key: string, from: string, to: string, now = new Date()) {
  const consultation = await visibleConsultation(user, key);
  if (to < from) throw new InvalidState('to must not be before from');
  const range = localDateRange(from, to, consultation.timezone);
  if (range.end.getTime() - range.start.getTime() > MAX_SLOT_RANGE_DAYS * 86_400_000)
    throw new InvalidState(`Ask for at most ${MAX_SLOT_RANGE_DAYS} days`);
  const ruleSet = (await RuleSet.findById(consultation.ruleSetId).lean<RuleSetDoc>())!;
  const slots = slotsBetween(scheduleOf(consultation, ruleSet), range.start > now ? range.start : now, range.end).filter(
    (slot) => slot.startsAt > now,
  );
  // Only the counters of the asked range, not every day the consultation ever had.
  const dayKeys = [...new Set(slots.map((slot) => dayKey(consultation._id, slot.startsAt, ruleSet.timezone)))];
  const [places, days] = await Promise.all([
    SlotPlace.find({ _id: { $in: slots.map((slot) => slotKey(consultation._id, slot.startsAt)) } }).lean(),
    DayPlace.find({ _id: { $in: dayKeys } }).lean(),
  ]);
  const booked = new Map(places.map((place) => [place._id, place.booked]));
  const dayBooked = new Map(days.map((day) => [day._id, day.booked]));
  return slots.map((slot) => {
    const dayFull = (dayBooked.get(dayKey(consultation._id, slot.startsAt, ruleSet.timezone)) ?? 0) >= ruleSet.metaData.maxBookingsPerDay;
    const remaining = dayFull ? 0 : Math.max(0, consultation.maxCapacity - (booked.get(slotKey(consultation._id, slot.startsAt)) ?? 0));
    return {
      ...localSlot(slot, consultation.timezone),
      startsAt: slot.startsAt.toISOString(),
      endsAt: slot.endsAt.toISOString(),
      capacity: consultation.maxCapacity,
      remaining,
    };
  });
}

export const slotKey = (consultationId: string, startsAt: Date) => `${consultationId}|${startsAt.toISOString()}`;
export const dayKey = (consultationId: string, startsAt: Date, zone: string) =>
  `${consultationId}|${localSlot({ startsAt, endsAt: startsAt }, zone).date}`;
