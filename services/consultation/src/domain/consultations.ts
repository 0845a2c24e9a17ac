import { newInternalId, newReference, type CreateConsultationBody } from '@mkt/contracts';
import { foundOr404, NotFound, type AuthenticatedUser, findPage } from '@mkt/kit';
import { SlotPlace, DayPlace } from '../db/booking.models';
import { Consultation, Pricing, RuleSet, type ConsultationDoc, type PricingDoc, type RuleSetDoc } from '../db/setup.models';
import { assertSeller, findByKey, isAdmin, visibleConsultation, type References } from './access';
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
  const slots = found.slice(0, MAX_SLOTS_PER_QUERY).map((slot) => {
    const local = localSlot(slot, consultation.timezone);
    // The day counter is per local day of the rule set's zone (usually the consultation's own).
    const day = ruleSet.timezone === consultation.timezone ? local.date : localSlot(slot, ruleSet.timezone).date;
    const startsAt = slot.startsAt.toISOString();
    return { local, day, startsAt, endsAt: slot.endsAt.toISOString() };
  });
  const [booked, dayBooked] = slots.length === 0 ? [new Map(), new Map()] : await placesTaken(consultation._id, slots);
  const items = slots.map(({ local, day, startsAt, endsAt }) => {
    const dayFull = (dayBooked.get(day) ?? 0) >= ruleSet.metaData.maxBookingsPerDay;
    const remaining = dayFull ? 0 : Math.max(0, consultation.maxCapacity - (booked.get(startsAt) ?? 0));
    const { date, startTime, endTime } = local;
    return { date, startTime, endTime, startsAt, endsAt, capacity: consultation.maxCapacity, remaining };
  });
  return { slots: items, truncated };
}

/**
 * Places booked per slot start (ISO) and per local day of the listed slots: one range query on
 * the counters' keys each (`<consultation>|<ISO start>`, `<consultation>|<date>`, which sort as
 * their times), not a key per slot — only the counters of the asked range are read.
 */
async function placesTaken(consultationId: string, slots: Array<{ day: string; startsAt: string }>) {
  const days = slots.map((slot) => slot.day).sort();
  const range = (first: string, last: string) => ({ _id: { $gte: `${consultationId}|${first}`, $lte: `${consultationId}|${last}` } });
  const [places, dayPlaces] = await Promise.all([
    SlotPlace.find(range(slots[0]!.startsAt, slots.at(-1)!.startsAt), { booked: 1, closed: 1 }).lean(),
    DayPlace.find(range(days[0]!, days.at(-1)!), { booked: 1 }).lean(),
  ]);
  // A slot whose session has left Scheduled is closed: listed as full, as booking it is refused.
  const byStart = (docs: Array<{ _id: string; booked: number; closed?: boolean }>) =>
    new Map(docs.map((doc) => [doc._id.slice(consultationId.length + 1), doc.closed ? Number.MAX_SAFE_INTEGER : doc.booked]));
  return [byStart(places), byStart(dayPlaces)] as const;
}

export const slotKey = (consultationId: string, startsAt: Date) => `${consultationId}|${startsAt.toISOString()}`;
export const dayKey = (consultationId: string, startsAt: Date, zone: string) =>
  `${consultationId}|${localSlot({ startsAt, endsAt: startsAt }, zone).date}`;
