import { newReference, type CreateRuleSetBody } from '@mkt/contracts';
import { InvalidField } from '@mkt/kit/domain';
import type { AuthenticatedUser } from '@mkt/kit';
import { assertSeller, type References } from './access';
import type { ConsultationDoc, RuleSetDoc } from './records';
import { countSlotsBetween, isValidZone } from './slots';

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
 * `utilization`: places booked in the window over the places the rule set's consultations offer
 * in it (4 decimals; 0 when it offers none).
 */
export function utilization(
  set: RuleSetDoc,
  consultations: Array<Pick<ConsultationDoc, 'duration' | 'maxCapacity'>>,
  upcoming: Array<{ places?: number }>,
  window: { from: Date; to: Date },
): number {
  const offered = consultations.reduce((sum, c) => {
    const schedule = {
      timezone: set.timezone,
      rules: set.availabilityRules,
      durationMinutes: c.duration,
      bufferMinutes: set.metaData.bufferTime,
    };
    return sum + countSlotsBetween(schedule, window.from, window.to) * c.maxCapacity;
  }, 0);
  const booked = upcoming.reduce((sum, b) => sum + (b.places ?? 1), 0);
  return offered === 0 ? 0 : Math.round((booked / offered) * 10_000) / 10_000;
}
