import { randomUUID } from 'node:crypto';
import type { Model } from 'mongoose';
import { BOOKABLE_CONSULTATION_FIELDS, type UpdateConsultationBody } from '@mkt/contracts';
import { Conflict, InvalidField, InvalidState, NotFound, type AuthenticatedUser } from '@mkt/kit';
import { Consultation, PUBLIC_TEXT_FIELDS, Pricing, RuleSet, type ConsultationDoc } from '../db/setup.models';
import { assertOwner, findByKey, mustFind } from './access';
import { ForeignRecord } from './consultation.errors';

// Edits of a consultation and their review: what an owner may change at once, what waits for an
// admin (issue 20: an approved consultation's text was edited into a scam and stayed listed).

/** How many times an edit is decided again when the consultation changed under it. */
const EDIT_ATTEMPTS = 3;

/** A conditional write of an edit: `guard` is what it was decided on; `touchesLive` whether the listed text or terms change. */
export interface EditWrite {
  guard: Record<string, unknown>;
  update: { $set?: Record<string, unknown>; $unset?: Record<string, ''> };
  touchesLive: boolean;
}

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * How an owner's edit (`set`: fields already checked, ids resolved) is written. The public text
 * of an Approved consultation (`PUBLIC_TEXT_FIELDS`) is what buyers trust: an edit of it becomes
 * the pending revision (over the previous one: the seller's latest wish, all of it under review)
 * while the approved text stays live, so approval cannot be bypassed by editing afterwards. A
 * change of what a booking gets (duration, capacity, rule set, pricing) sends the consultation
 * back to Pending and Hidden; like any edit of a Pending consultation, its text then applies at
 * once (a pending revision folded in): nothing of it is listed until an admin approves it all.
 */
export function decideEdit(current: ConsultationDoc, set: Record<string, unknown>, fresh: { revisionId: string; now: Date }): EditWrite {
  const guard = {
    currentStatus: current.currentStatus,
    ...(current.pendingRevision ? { 'pendingRevision.id': current.pendingRevision.id } : { pendingRevision: null }),
  };
  const text: Record<string, unknown> = {};
  const terms: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(set))
    ((PUBLIC_TEXT_FIELDS as readonly string[]).includes(field) ? text : terms)[field] = value;
  const rebookable = BOOKABLE_CONSULTATION_FIELDS.some((field) => terms[field] !== undefined && terms[field] !== current[field]);
  if (current.currentStatus === 'Approved' && !rebookable) {
    // Terms equal to the live ones change nothing; the text waits for review.
    if (Object.keys(text).length === 0) return { guard, update: { $set: terms }, touchesLive: false };
    const proposed: Record<string, unknown> = { ...current.pendingRevision?.changes, ...text };
    const changes = Object.fromEntries(
      Object.entries(proposed).filter(([field, value]) => !sameValue(value, current[field as keyof ConsultationDoc])),
    );
    // Back to the live text: nothing waits any more.
    if (Object.keys(changes).length === 0)
      return {
        guard,
        update: { ...(Object.keys(terms).length > 0 ? { $set: terms } : {}), $unset: { pendingRevision: '' } },
        touchesLive: false,
      };
    return {
      guard,
      update: { $set: { ...terms, pendingRevision: { id: fresh.revisionId, submittedAt: fresh.now, changes } } },
      touchesLive: false,
    };
  }
  const live = { ...current.pendingRevision?.changes, ...set, ...(rebookable ? { currentStatus: 'Pending', visibility: 'Hidden' } : {}) };
  return { guard, update: { $set: live, ...(current.pendingRevision ? { $unset: { pendingRevision: '' } } : {}) }, touchesLive: true };
}

/**
 * The owner edits a consultation. The write is decided by `decideEdit` and guarded by what it was
 * decided on (the state and the pending revision read): when an admin's approval or another edit
 * lands in between, the edit is decided again on the new state — text never goes live unreviewed
 * because its consultation was approved between the read and the write.
 */
export async function updateConsultation(user: AuthenticatedUser, key: string, body: UpdateConsultationBody): Promise<ConsultationDoc> {
  const first = await mustFind(Consultation, key, 'Consultation');
  assertOwner(user, first.sellerId, 'consultation');
  const set: Record<string, unknown> = { ...body };
  if (body.maxCapacity !== undefined && first.sessionType === 'OneToOne' && body.maxCapacity !== 1)
    throw new InvalidField('A OneToOne consultation has maxCapacity 1', 'maxCapacity');
  if (body.ruleSetId !== undefined) set.ruleSetId = (await ownRecord(RuleSet, body.ruleSetId, first.sellerId, 'ruleSetId'))._id;
  if (body.pricingId !== undefined) set.pricingId = (await ownRecord(Pricing, body.pricingId, first.sellerId, 'pricingId'))._id;
  let consultation = first;
  for (let attempt = 0; attempt < EDIT_ATTEMPTS; attempt += 1) {
    const write = decideEdit(consultation, set, { revisionId: randomUUID(), now: new Date() });
    const updated = await Consultation.findOneAndUpdate({ _id: consultation._id, ...write.guard }, write.update, {
      new: true,
      timestamps: write.touchesLive,
    }).lean<ConsultationDoc>();
    if (updated) return updated;
    consultation = await mustFind(Consultation, consultation._id, 'Consultation');
  }
  throw new Conflict('The consultation kept changing while it was edited: send the edit again');
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

/**
 * An admin approves: a Pending consultation becomes Approved and Published; an Approved one's
 * pending revision (named by `revisionId`, the one the admin read) replaces its live text — one
 * conditional write, which misses if the revision was replaced meanwhile.
 */
export async function approveConsultation(key: string, revisionId?: string): Promise<{ consultation: ConsultationDoc; revised: boolean }> {
  const consultation = await mustFind(Consultation, key, 'Consultation');
  const revision = consultation.pendingRevision;
  if (revisionId !== undefined && revision?.id !== revisionId)
    throw new InvalidState('That is not the pending revision of this consultation: read it again');
  if (consultation.currentStatus === 'Pending') {
    const approved = await Consultation.findOneAndUpdate(
      { _id: consultation._id, currentStatus: 'Pending' },
      { $set: { currentStatus: 'Approved', visibility: 'Published' } },
      { new: true },
    ).lean<ConsultationDoc>();
    if (!approved) throw new InvalidState(`A ${consultation.currentStatus} consultation cannot be approved`);
    return { consultation: approved, revised: false };
  }
  if (!revision) throw new InvalidState(`A ${consultation.currentStatus} consultation cannot be approved`);
  if (revisionId === undefined)
    throw new InvalidField('Name the pending revision you read (pendingRevision.id of the detail)', 'revisionId');
  const revised = await Consultation.findOneAndUpdate(
    { _id: consultation._id, currentStatus: 'Approved', 'pendingRevision.id': revision.id },
    { $set: revision.changes, $unset: { pendingRevision: '' } },
    { new: true },
  ).lean<ConsultationDoc>();
  if (!revised) throw new InvalidState('The pending revision changed meanwhile: read it again');
  return { consultation: revised, revised: true };
}
