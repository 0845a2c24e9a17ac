import {
  newInternalId,
  newUnderscoreReference,
  type CreateVisibilityRuleSetBody,
  type VisibilityStatusBody,
} from '@mkt/contracts/consultation';
import { InvalidField } from '@mkt/kit/domain';
import type { AuthenticatedUser } from '@mkt/kit/http';
import { assertSeller, isAdmin, isListed, subjectOf } from './access';
import type { ConsultationDoc, VisibilityRuleSetDoc } from './records';
import { decideVisibility, ruleSetInForce, type VisibilityContext } from './visibility';

export function newVisibilityRuleSet(user: AuthenticatedUser, body: CreateVisibilityRuleSetBody): Omit<VisibilityRuleSetDoc, 'createdAt'> {
  assertSeller(user);
  return {
    _id: newInternalId('vrs'),
    referenceId: newUnderscoreReference('VRS'),
    sellerId: user.id,
    ...body,
    validFrom: new Date(body.validFrom),
    validTo: new Date(body.validTo),
  } as Omit<VisibilityRuleSetDoc, 'createdAt'>;
}

/**
 * The verdict for each asked key (id or reference), in the order asked. A consultation that is
 * not listed is, to anyone but its seller and an admin, what a missing one is: the same verdict
 * and reason, so its existence does not leak. `sets`: the sellers' default active rule sets,
 * newest first.
 */
export function visibilityVerdicts(
  user: AuthenticatedUser,
  keys: string[],
  found: ConsultationDoc[],
  sets: VisibilityRuleSetDoc[],
  context: VisibilityContext,
  now: Date,
) {
  return keys.map((consultationId) => {
    const consultation = found.find((c) => c._id === consultationId || c.referenceId === consultationId) ?? null;
    const mayKnow = consultation && (isListed(consultation) || consultation.sellerId === user.id || isAdmin(user));
    if (!consultation || !mayKnow) return { consultationId, visible: false, reason: 'No such consultation' };
    const inForce = ruleSetInForce(
      sets.filter((set) => set.sellerId === consultation.sellerId),
      now,
    );
    return { consultationId, ...decideVisibility(isListed(consultation), inForce, context) };
  });
}

/** The sellers whose rule sets the verdicts need. */
export const sellersOf = (found: ConsultationDoc[]) => [...new Set(found.map((c) => c.sellerId))];

/**
 * What `user_type` rules match. A `userId` naming the caller: their role from the token, not
 * what the body claims (a different `context.userType` is 422 `invalid`). An admin naming another user:
 * the context as the admin states it (this service keeps no directory of users' roles). No
 * `userId`: the context as sent — a preview of how such a user would see the consultations.
 */
export function contextOf(user: AuthenticatedUser, body: VisibilityStatusBody): VisibilityContext {
  if (body.userId === undefined) return body.context;
  const subject = subjectOf(user, body.userId);
  if (!subject.self) return body.context;
  const claimed = body.context.userType?.toLowerCase();
  if (claimed && claimed !== subject.role)
    throw new InvalidField(`userId names you, a ${subject.role}: leave context.userType out or send ${subject.role}`, 'context.userType');
  return { ...body.context, userType: subject.role };
}
