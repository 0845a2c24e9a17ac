import { randomUUID } from 'node:crypto';
import { newReference, type CreateRuleSetBody, type PageQuery } from '@mkt/contracts';
import { InvalidField, findPage, type AuthenticatedUser } from '@mkt/kit';
import { Booking } from '../db/booking.models';
import { Consultation, RuleSet, type ConsultationDoc, type RuleSetDoc } from '../db/setup.models';
import { assertOwner, assertSeller, mustFind, type References } from './access';
import { countSlotsBetween, isValidZone } from './slots';

// Availability rule sets: a seller's weekly intervals in a time zone, and how much they are used.

/** How far ahead `utilization` looks. */
const UTILIZATION_DAYS = 28;

export function assertZone(zone: string, path: string): void {
  if (!isValidZone(zone)) throw new InvalidField('Not an IANA time zone such as Africa/Addis_Ababa', path);
}

export async function createRuleSet(user: AuthenticatedUser, body: CreateRuleSetBody, references: References): Promise<RuleSetDoc> {
  assertSeller(user);
  assertZone(body.timezone, 'timezone');
  const doc = await RuleSet.create({
    _id: randomUUID(),
    referenceId: newReference('AVL-RST', references.prefix),
    sellerId: user.id,
    status: 'Active',
    ...body,
    description: body.description ?? '',
  });
  return doc.toObject();
}

export async function listRuleSets(user: AuthenticatedUser, query: PageQuery, now = new Date()) {
  const filter = user.role === 'admin' ? {} : { sellerId: user.id };
  const page = await findPage(RuleSet, filter, query, { createdAt: -1 });
  const items = await Promise.all(page.items.map(async (set) => ({ set, ...(await usage(set, now)) })));
  return { items, pagination: page.pagination };
}

/**
 * `bookings`: confirmed bookings of consultations on this rule set; `utilization`: places
 * booked in the next 28 days over the places the rule set offers them in that time.
 */
async function usage(set: RuleSetDoc, now: Date): Promise<{ bookings: number; utilization: number }> {
  const horizon = new Date(now.getTime() + UTILIZATION_DAYS * 86_400_000);
  const [bookings, upcoming, consultations] = await Promise.all([
    Booking.countDocuments({ ruleSetId: set._id, status: 'Confirmed' }),
    Booking.find({ ruleSetId: set._id, status: 'Confirmed', startsAt: { $gte: now, $lt: horizon } }, { places: 1 }).lean(),
    Consultation.find({ ruleSetId: set._id }, { duration: 1, maxCapacity: 1 }).lean<ConsultationDoc[]>(),
  ]);
  const offered = consultations.reduce((sum, c) => {
    const schedule = {
      timezone: set.timezone,
      rules: set.availabilityRules,
      durationMinutes: c.duration,
      bufferMinutes: set.metaData.bufferTime,
    };
    return sum + countSlotsBetween(schedule, now, horizon) * c.maxCapacity;
  }, 0);
  const booked = upcoming.reduce((sum, b) => sum + (b.places ?? 1), 0);
  return { bookings, utilization: offered === 0 ? 0 : Math.round((booked / offered) * 10_000) / 10_000 };
}

export async function ruleSetDetail(user: AuthenticatedUser, key: string): Promise<RuleSetDoc> {
  const set = await mustFind(RuleSet, key, 'Rule set');
  assertOwner(user, set.sellerId, 'rule set');
  return set;
}
