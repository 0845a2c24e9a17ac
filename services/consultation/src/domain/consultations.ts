import type { Model } from 'mongoose';
import {
  BOOKABLE_CONSULTATION_FIELDS,
  newInternalId,
  newReference,
  type CreateConsultationBody,
  type UpdateConsultationBody,
} from '@mkt/contracts';
import { InvalidField, foundOr404, InvalidState, NotFound, type AuthenticatedUser, findPage } from '@mkt/kit';
import { SlotPlace, DayPlace } from '../db/booking.models';
import { Consultation, Pricing, RuleSet, type ConsultationDoc, type PricingDoc, type RuleSetDoc } from '../db/setup.models';
import { assertOwner, assertSeller, findByKey, isAdmin, mustFind, visibleConsultation, type References } from './access';
import { ForeignRecord } from './consultation.errors';
import { assertZone } from './rule-sets';
import { localDateRange, localSlot, slotsBetween, type Schedule } from './slots';

/** A slots answer holds at most this many (the earliest); `truncated` says when more exist. */
export const MAX_SLOTS_PER_QUERY = 500;

export { isListed, visibleConsultation } from './access';

export function scheduleOf(consultation: ConsultationDoc, ruleSet: RuleSetDoc): Schedule {
  return {
    timezone: ruleSet.timezone,
    rules: ruleSet.availabilityRules,
    durationMinutes: consultation.duration,
    bufferMinutes: ruleSet.metaData.bufferTime,
  };
}

export async function createConsultation(
  user: AuthenticatedUser,
  body: CreateConsultationBody,
  references: References,
): Promise<ConsultationDoc> {
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
    referenceId: newReference('CON', references.prefix),
    sellerId: user.id,
    sellerRef: user.ref,
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
  return findPage(Consultation, filter, query, { createdAt: -1 });
}

export async function consultationDetail(
  user: AuthenticatedUser | undefined,
  key: string,
): Promise<{ consultation: ConsultationDoc; pricing: PricingDoc | null }> {
  const consultation = await visibleConsultation(user, key);
  return { consultation, pricing: await Pricing.findById(consultation.pricingId).lean<PricingDoc>() };
}

/**
 * The owner edits a consultation. A change of what a booking gets (duration, capacity, rule
 * set, pricing) sends an Approved consultation back to Pending and Hidden, in the same write:
 * it is off the market until an admin approves it again. Other edits keep its state.
 */
export async function updateConsultation(user: AuthenticatedUser, key: string, body: UpdateConsultationBody): Promise<ConsultationDoc> {
  const consultation = await mustFind(Consultation, key, 'Consultation');
  assertOwner(user, consultation.sellerId, 'consultation');
  const set: Record<string, unknown> = { ...body };
  if (body.maxCapacity !== undefined && consultation.sessionType === 'OneToOne' && body.maxCapacity !== 1)
    throw new InvalidField('A OneToOne consultation has maxCapacity 1', 'maxCapacity');
  if (body.ruleSetId !== undefined) set.ruleSetId = (await ownRecord(RuleSet, body.ruleSetId, consultation.sellerId, 'ruleSetId'))._id;
  if (body.pricingId !== undefined) set.pricingId = (await ownRecord(Pricing, body.pricingId, consultation.sellerId, 'pricingId'))._id;
  const rebookable = BOOKABLE_CONSULTATION_FIELDS.some((field) => set[field] !== undefined && set[field] !== consultation[field]);
  if (rebookable) Object.assign(set, { currentStatus: 'Pending', visibility: 'Hidden' });
  return foundOr404(
    await Consultation.findOneAndUpdate({ _id: consultation._id }, { $set: set }, { new: true }).lean<ConsultationDoc>(),
    'Consultation',
  );
}

async function ownRecord<T extends { _id: string; sellerId: string }>(
  model: Model<T>,
  key: string,
  sellerId: string,
  path: 'ruleSetId' | 'pricingId',
): Promise<T> {
  const what = path === 'ruleSetId' ? 'rule set' : 'pricing';
  const found = await findByKey(model, key);
  if (!found) throw new NotFound(what === 'rule set' ? 'Rule set' : 'Pricing');
  if (found.sellerId !== sellerId) throw new ForeignRecord(path, what);
  return found;
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

/**
 * Future slots between two local dates (the consultation's zone) with the places left. The
 * range (≤ 31 days) is checked by `SlotsQuery`; the answer holds the earliest
 * `MAX_SLOTS_PER_QUERY`, and the work stops there too: a wide query of short slots costs no
 * more than that.
 */
export async function freeSlots(user: AuthenticatedUser | undefined, key: string, from: string, to: string, now = new Date()) {
  const consultation = await visibleConsultation(user, key);
  const range = localDateRange(from, to, consultation.timezone);
  const ruleSet = foundOr404(await RuleSet.findById(consultation.ruleSetId).lean<RuleSetDoc>(), 'Rule set');
  const found = slotsBetween(
    scheduleOf(consultation, ruleSet),
    range.start > now ? range.start : new Date(now.getTime() + 1),
    range.end,
    MAX_SLOTS_PER_QUERY + 1,
  );
  const truncated = found.length > MAX_SLOTS_PER_QUERY;
  const slots = found.slice(0, MAX_SLOTS_PER_QUERY);
  // Only the counters of the asked range, not every day the consultation ever had.
  const dayKeys = [...new Set(slots.map((slot) => dayKey(consultation._id, slot.startsAt, ruleSet.timezone)))];
  const [places, days] = await Promise.all([
    SlotPlace.find({ _id: { $in: slots.map((slot) => slotKey(consultation._id, slot.startsAt)) } }).lean(),
    DayPlace.find({ _id: { $in: dayKeys } }).lean(),
  ]);
  const booked = new Map(places.map((place) => [place._id, place.booked]));
  const dayBooked = new Map(days.map((day) => [day._id, day.booked]));
  const items = slots.map((slot) => {
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
  return { slots: items, truncated };
}

export const slotKey = (consultationId: string, startsAt: Date) => `${consultationId}|${startsAt.toISOString()}`;
export const dayKey = (consultationId: string, startsAt: Date, zone: string) =>
  `${consultationId}|${localSlot({ startsAt, endsAt: startsAt }, zone).date}`;
