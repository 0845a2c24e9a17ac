import { newInternalId, newReference, type CreateConsultationBody } from '@mkt/contracts/consultation';
import { NotFound } from '@mkt/kit/domain';
import type { AuthenticatedUser } from '@mkt/kit/http';
import { assertSeller, type References } from './access';
import { ForeignRecord } from './errors';
import type { ConsultationDoc, PricingDoc, RuleSetDoc } from './records';
import { assertZone } from './rule-sets';
import { localDateRange, localSlot, slotsBetween, type Schedule } from './slots';

/** A slots answer holds at most this many (the earliest); `truncated` says when more exist. */
export const MAX_SLOTS_PER_QUERY = 500;

export function scheduleOf(consultation: Pick<ConsultationDoc, 'duration'>, ruleSet: RuleSetDoc): Schedule {
  return {
    timezone: ruleSet.timezone,
    rules: ruleSet.availabilityRules,
    durationMinutes: consultation.duration,
    bufferMinutes: ruleSet.metaData.bufferTime,
  };
}

/** The key of a slot's place counter: `<consultation>|<ISO start>` (sorts as the starts do). */
export const slotKey = (consultationId: string, startsAt: Date) => `${consultationId}|${startsAt.toISOString()}`;
/** The key of a day's place counter: `<consultation>|<local date in the rule set's zone>`. */
export const dayKey = (consultationId: string, startsAt: Date, zone: string) =>
  `${consultationId}|${localSlot({ startsAt, endsAt: startsAt }, zone).date}`;

/** Before anything is read: the caller is a seller and the zone is a real one. */
export function checkNewConsultation(user: AuthenticatedUser, body: CreateConsultationBody): void {
  assertSeller(user);
  assertZone(body.timezone, 'timezone');
}

/**
 * A new consultation, Pending and Hidden, on the seller's own rule set and pricing (another
 * seller's: 403 naming the field; unknown: 404).
 */
export function newConsultation(
  user: AuthenticatedUser,
  body: CreateConsultationBody,
  found: { ruleSet: RuleSetDoc | null; pricing: PricingDoc | null },
  references: References,
): Omit<ConsultationDoc, 'createdAt' | 'updatedAt' | 'averageRating' | 'totalReviews'> {
  const { ruleSet, pricing } = found;
  if (!ruleSet) throw new NotFound('Rule set');
  if (!pricing) throw new NotFound('Pricing');
  if (ruleSet.sellerId !== user.id) throw new ForeignRecord('ruleSetId', 'rule set');
  if (pricing.sellerId !== user.id) throw new ForeignRecord('pricingId', 'pricing');
  return {
    ...body,
    _id: newInternalId('con'),
    referenceId: newReference('CON', references.prefix),
    sellerId: user.id,
    sellerRef: user.ref,
    ruleSetId: ruleSet._id,
    pricingId: pricing._id,
    currentStatus: 'Pending',
    visibility: 'Hidden',
  } as Omit<ConsultationDoc, 'createdAt' | 'updatedAt' | 'averageRating' | 'totalReviews'>;
}

/** A listed slot before its places are known: its local times, its day (counter key) and start. */
export interface SlotToList {
  local: { date: string; startTime: string; endTime: string };
  day: string;
  startsAt: string;
  endsAt: string;
}

/**
 * The future slots between two local dates (the consultation's zone), the earliest
 * `MAX_SLOTS_PER_QUERY`: the work stops there too, so a wide query of short slots costs no more.
 */
export function slotsToList(
  consultation: ConsultationDoc,
  ruleSet: RuleSetDoc,
  from: string,
  to: string,
  now: Date,
): { slots: SlotToList[]; truncated: boolean } {
  const range = localDateRange(from, to, consultation.timezone);
  const found = slotsBetween(
    scheduleOf(consultation, ruleSet),
    range.start > now ? range.start : new Date(now.getTime() + 1),
    range.end,
    MAX_SLOTS_PER_QUERY + 1,
  );
  const slots = found.slice(0, MAX_SLOTS_PER_QUERY).map((slot) => {
    const local = localSlot(slot, consultation.timezone);
    // The day counter is per local day of the rule set's zone (usually the consultation's own).
    const day = ruleSet.timezone === consultation.timezone ? local.date : localSlot(slot, ruleSet.timezone).date;
    return { local, day, startsAt: slot.startsAt.toISOString(), endsAt: slot.endsAt.toISOString() };
  });
  return { slots, truncated: found.length > MAX_SLOTS_PER_QUERY };
}

/** Places booked per slot start (ISO) and per local day; a closed slot counts as full. */
export interface PlacesTaken {
  bySlot: Map<string, number>;
  byDay: Map<string, number>;
}

/**
 * The counters' documents read back as places taken per start (or day). A slot whose session
 * has left Scheduled is closed: listed as full, as booking it is refused.
 */
export function placesByKey(consultationId: string, docs: Array<{ _id: string; booked: number; closed?: boolean }>): Map<string, number> {
  return new Map(docs.map((doc) => [doc._id.slice(consultationId.length + 1), doc.closed ? Number.MAX_SAFE_INTEGER : doc.booked]));
}

/** Each slot with the places left: none once its day is full, else the capacity less its bookings. */
export function slotsWithPlaces(consultation: ConsultationDoc, ruleSet: RuleSetDoc, slots: SlotToList[], taken: PlacesTaken) {
  return slots.map(({ local, day, startsAt, endsAt }) => {
    const dayFull = (taken.byDay.get(day) ?? 0) >= ruleSet.metaData.maxBookingsPerDay;
    const remaining = dayFull ? 0 : Math.max(0, consultation.maxCapacity - (taken.bySlot.get(startsAt) ?? 0));
    const { date, startTime, endTime } = local;
    return { date, startTime, endTime, startsAt, endsAt, capacity: consultation.maxCapacity, remaining };
  });
}
