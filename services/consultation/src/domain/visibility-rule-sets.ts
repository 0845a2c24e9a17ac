import { newInternalId, newUnderscoreReference, type CreateVisibilityRuleSetBody, type VisibilityStatusBody } from '@mkt/contracts';
import { InvalidField, type AuthenticatedUser } from '@mkt/kit';
import { Consultation, VisibilityRuleSet, type ConsultationDoc } from '../db/setup.models';
import { assertSeller, isAdmin, isListed, subjectOf } from './access';
import { decideVisibility, ruleSetInForce, type VisibilityContext } from './visibility';

export async function createVisibilityRuleSet(user: AuthenticatedUser, body: CreateVisibilityRuleSetBody) {
  assertSeller(user);
  const doc = await VisibilityRuleSet.create({
    _id: newInternalId('vrs'),
    referenceId: newUnderscoreReference('VRS'),
    sellerId: user.id,
    ...body,
    validFrom: new Date(body.validFrom),
    validTo: new Date(body.validTo),
  });
  return doc.toObject();
}

/**
 * A consultation that is not listed is, to anyone but its seller and an admin, what a missing
 * one is: the same verdict and reason, so its existence does not leak.
 */
export async function visibilityStatus(user: AuthenticatedUser, body: VisibilityStatusBody, now = new Date()) {
  const context = contextOf(user, body);
  const ids = body.consultationIds;
  const found = await Consultation.find({ $or: [{ _id: { $in: ids } }, { referenceId: { $in: ids } }] }).lean<ConsultationDoc[]>();
  const consultations = ids.map((key) => found.find((c) => c._id === key || c.referenceId === key) ?? null);
  const sellers = [...new Set(consultations.filter((c): c is ConsultationDoc => c !== null).map((c) => c.sellerId))];
  const sets = await VisibilityRuleSet.find({ sellerId: { $in: sellers }, isDefault: true, isActive: true })
    .sort({ createdAt: -1 })
    .lean();
  return body.consultationIds.map((consultationId, index) => {
    const consultation = consultations[index];
    const mayKnow = consultation && (isListed(consultation) || consultation.sellerId === user.id || isAdmin(user));
    if (!consultation || !mayKnow) return { consultationId, visible: false, reason: 'No such consultation' };
    const inForce = ruleSetInForce(
      sets.filter((set) => set.sellerId === consultation.sellerId),
      now,
    );
    return { consultationId, ...decideVisibility(isListed(consultation), inForce, context) };
  });
}

/**
 * What `user_type` rules match. A `userId` naming the caller: their role from the token, not
 * what the body claims (a different `context.userType` is 422 `invalid`). An admin naming another user:
 * the context as the admin states it (this service keeps no directory of users' roles). No
 * `userId`: the context as sent — a preview of how such a user would see the consultations.
 */
function contextOf(user: AuthenticatedUser, body: VisibilityStatusBody): VisibilityContext {
  if (body.userId === undefined) return body.context;
  const subject = subjectOf(user, body.userId);
  if (!subject.self) return body.context;
  const claimed = body.context.userType?.toLowerCase();
  if (claimed && claimed !== subject.role)
    throw new InvalidField(`userId names you, a ${subject.role}: leave context.userType out or send ${subject.role}`, 'context.userType');
  return { ...body.context, userType: subject.role };
}
