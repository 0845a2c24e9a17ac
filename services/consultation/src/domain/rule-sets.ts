import { newReference, type CreateRuleSetBody } from '@mkt/contracts/consultation';
import { InvalidField } from '@mkt/kit/domain';
import type { AuthenticatedUser } from '@mkt/kit/http';
import { assertSeller, type References } from './access';
import type { RuleSetDoc } from './records';
import { countSlotsByDuration, isValidZone } from './slots';

// Availability rule sets: a seller's weekly intervals in a time zone, and how much they are used.

/** How far ahead `utilization` looks. */
export const UTILIZATION_DAYS = 28;

export function assertZone(zone: string, path: string): void {
  if (!isValidZone(zone)) throw new InvalidField('Not an IANA time zone such as Africa/Addis_Ababa', path);
}

/** A seller's new rule set (the zone must be a real one: 422 `invalid` on `timezone`). */
export function newRuleSet(
  user: AuthenticatedUser,
  body: CreateRuleSetBody,
  references: References,
  id: string,
): Omit<RuleSetDoc, 'createdAt' | 'updatedAt'> {
  assertSeller(user);
  assertZone(body.timezone, 'timezone');
  return {
    _id: id,
    referenceId: newReference('AVL-RST', references.prefix),
    sellerId: user.id,
    status: 'Active',
    ...body,
    description: body.description ?? '',
  } as Omit<RuleSetDoc, 'createdAt' | 'updatedAt'>;
}

/** The window `utilization` looks at: from now, `UTILIZATION_DAYS` ahead. */
export function utilizationWindow(now: Date): { from: Date; to: Date } {
  return { from: now, to: new Date(now.getTime() + UTILIZATION_DAYS * 86_400_000) };
}

/**
 * What the consultations on one rule set offer, grouped by their shape: the duration (the rule
 * set gives the zone, intervals and buffer) with the sum of their capacities. Consultations of one
 * duration offer their slots alike, so their places are counted once for all of them.
 */
export interface OfferShape {
  duration: number;
  capacity: number;
}

/** `utilization` of one rule set, and how many shapes (distinct durations) it counted slots for. */
export interface Utilization {
  utilization: number;
  shapesCounted: number;
}

/**
 * `utilization`: places booked in the window over the places the rule set's consultations offer
 * in it (4 decimals; 0 when it offers none). The slots are counted once per shape (see
 * `OfferShape`), by `countSlotsByDuration`, whose cost does not grow with the slots: what a
 * listing costs is bounded by the distinct durations on its rule sets, not by how many
 * consultations they carry.
 */
export function utilization(
  set: RuleSetDoc,
  shapes: readonly OfferShape[],
  bookedPlaces: number,
  window: { from: Date; to: Date },
): Utilization {
  const base = { timezone: set.timezone, rules: set.availabilityRules, bufferMinutes: set.metaData.bufferTime };
  const capacityOf = new Map<number, number>();
  for (const shape of shapes) capacityOf.set(shape.duration, (capacityOf.get(shape.duration) ?? 0) + shape.capacity);
  const slots = countSlotsByDuration(base, [...capacityOf.keys()], window.from, window.to);
  let offered = 0;
  for (const [duration, capacity] of capacityOf) offered += slots.get(duration)! * capacity;
  return {
    utilization: offered === 0 ? 0 : Math.round((bookedPlaces / offered) * 10_000) / 10_000,
    shapesCounted: capacityOf.size,
  };
}
