import { BOOKABLE_CONSULTATION_FIELDS, type UpdateConsultationBody } from '@mkt/contracts';
import { InvalidField, InvalidState, NotFound } from '@mkt/kit/domain';
import { ForeignRecord } from './consultation.errors';
import { PUBLIC_TEXT_FIELDS, type ConsultationDoc } from './records';

// Edits of a consultation and their review: what an owner may change at once, what waits for an
// admin (issue 20: an approved consultation's text was edited into a scam and stayed listed).

/** How many times an edit is decided again when the consultation changed under it. */
export const EDIT_ATTEMPTS = 3;

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
 * What an edit asks before its rule set and pricing are looked up: a OneToOne consultation keeps
 * `maxCapacity` 1 (422 `invalid`).
 */
export function checkEdit(current: Pick<ConsultationDoc, 'sessionType'>, body: UpdateConsultationBody): void {
  if (body.maxCapacity !== undefined && current.sessionType === 'OneToOne' && body.maxCapacity !== 1)
    throw new InvalidField('A OneToOne consultation has maxCapacity 1', 'maxCapacity');
}

/** A rule set or pricing an edit names: it exists (else 404) and is the seller's own (else 403 naming the field). */
export function ownRecord<T extends { _id: string; sellerId: string }>(
  found: T | null,
  sellerId: string,
  path: 'ruleSetId' | 'pricingId',
): T {
  const what = path === 'ruleSetId' ? 'rule set' : 'pricing';
  if (!found) throw new NotFound(what === 'rule set' ? 'Rule set' : 'Pricing');
  if (found.sellerId !== sellerId) throw new ForeignRecord(path, what);
  return found;
}

/** An approval as one conditional write: the filter it is guarded by and the update. */
export interface ApprovalWrite {
  guard: Record<string, unknown>;
  update: { $set: Record<string, unknown>; $unset?: Record<string, ''> };
  revised: boolean;
  /** Why it is refused when the guard misses (someone else moved the consultation first). */
  missed: string;
}

/**
 * An admin approves: a Pending consultation becomes Approved and Published; an Approved one's
 * pending revision (named by `revisionId`, the one the admin read) replaces its live text — one
 * conditional write, which misses if the revision was replaced meanwhile.
 */
export function decideApprove(consultation: ConsultationDoc, revisionId: string | undefined): ApprovalWrite {
  const revision = consultation.pendingRevision;
  if (revisionId !== undefined && revision?.id !== revisionId)
    throw new InvalidState('That is not the pending revision of this consultation: read it again');
  if (consultation.currentStatus === 'Pending')
    return {
      guard: { currentStatus: 'Pending' },
      update: { $set: { currentStatus: 'Approved', visibility: 'Published' } },
      revised: false,
      missed: `A ${consultation.currentStatus} consultation cannot be approved`,
    };
  if (!revision) throw new InvalidState(`A ${consultation.currentStatus} consultation cannot be approved`);
  if (revisionId === undefined)
    throw new InvalidField('Name the pending revision you read (pendingRevision.id of the detail)', 'revisionId');
  return {
    guard: { currentStatus: 'Approved', 'pendingRevision.id': revision.id },
    update: { $set: revision.changes, $unset: { pendingRevision: '' } },
    revised: true,
    missed: 'The pending revision changed meanwhile: read it again',
  };
}
