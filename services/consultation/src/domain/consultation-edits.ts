import {
  adminActionData,
  BOOKABLE_CONSULTATION_FIELDS,
  makeEvent,
  type AdminRequestContext,
  type IntegrationEvent,
  type UpdateConsultationBody,
} from '@mkt/contracts/consultation';
import { Conflict, InvalidField, InvalidState, NotFound } from '@mkt/kit/domain';
import { ForeignRecord } from './errors';
import { PUBLIC_TEXT_FIELDS, type ConsultationDoc } from './records';

// Edits of a consultation and their review: what an owner may change at once, what waits for an
// admin (an approved consultation's text was edited into a scam and stayed listed).

/** How many times an edit is decided again when the consultation changed under it. */
export const EDIT_ATTEMPTS = 3;

/** A conditional write of an edit: `guard` is what it was decided on; `touchesLive` whether the listed text or terms change. */
export interface EditWrite {
  guard: ConsultationGuard;
  change: ConsultationChange;
  touchesLive: boolean;
}

/**
 * What an edit or an approval expects of the consultation still (beyond its id): the write
 * applies only while it holds.
 */
export interface ConsultationGuard {
  currentStatus: ConsultationDoc['currentStatus'];
  /** The id of its pending revision; null: it has none. Absent: either. */
  pendingRevisionId?: string | null;
  /** Its version (0: none stored yet, see `versionOf`). Absent: any. */
  version?: number;
}

/** What an edit or an approval changes; every one also moves the consultation's `version` on by one. */
export interface ConsultationChange {
  /** The fields it sets. */
  set?: Record<string, unknown>;
  /** The pending revision goes. */
  dropRevision?: true;
  /** The outbox: the write's audit entry. */
  event?: IntegrationEvent;
}

/**
 * A consultation's version: 1 when made, one more at every edit (its text, its terms, or a
 * pending revision submitted or dropped) and every approval. What an admin reads is that version
 * (the detail's `version`); approving names it, so what goes live is exactly what was read. A
 * record from before versions were kept reads as 0 until its first edit.
 */
export const versionOf = (c: Pick<ConsultationDoc, 'version'>): number => c.version ?? 0;

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
  const guard: ConsultationGuard = { currentStatus: current.currentStatus, pendingRevisionId: current.pendingRevision?.id ?? null };
  const text: Record<string, unknown> = {};
  const terms: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(set))
    ((PUBLIC_TEXT_FIELDS as readonly string[]).includes(field) ? text : terms)[field] = value;
  const rebookable = BOOKABLE_CONSULTATION_FIELDS.some((field) => terms[field] !== undefined && terms[field] !== current[field]);
  if (current.currentStatus === 'Approved' && !rebookable) {
    // Terms equal to the live ones change nothing; the text waits for review.
    if (Object.keys(text).length === 0) return { guard, change: { set: terms }, touchesLive: false };
    const proposed: Record<string, unknown> = { ...current.pendingRevision?.changes, ...text };
    const changes = Object.fromEntries(
      Object.entries(proposed).filter(([field, value]) => !sameValue(value, current[field as keyof ConsultationDoc])),
    );
    // Back to the live text: nothing waits any more.
    if (Object.keys(changes).length === 0)
      return {
        guard,
        change: { ...(Object.keys(terms).length > 0 ? { set: terms } : {}), dropRevision: true },
        touchesLive: false,
      };
    return {
      guard,
      change: { set: { ...terms, pendingRevision: { id: fresh.revisionId, submittedAt: fresh.now, changes } } },
      touchesLive: false,
    };
  }
  const live = { ...current.pendingRevision?.changes, ...set, ...(rebookable ? { currentStatus: 'Pending', visibility: 'Hidden' } : {}) };
  return {
    guard,
    change: { set: live, ...(current.pendingRevision ? { dropRevision: true as const } : {}) },
    touchesLive: true,
  };
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

/** An approval as one conditional write: what it is guarded by and what it changes. */
export interface ApprovalWrite {
  guard: ConsultationGuard;
  change: ConsultationChange & { set: Record<string, unknown> };
  revised: boolean;
}

/** What the admin names as what they read: the consultation's `version`, and/or its pending revision's id. */
export interface ApprovalNames {
  version?: number;
  revisionId?: string;
}

/**
 * An admin approves exactly what they read. A Pending consultation becomes Approved and
 * Published only at the `version` the admin names (required: without it, an edit the seller made
 * after the admin read it would go live unreviewed); an Approved one's pending revision replaces
 * its live text when the admin names it by `revisionId` or by the `version` it came with. Either
 * is one conditional write guarded by what was named, so an edit landing between the read and
 * the click makes it miss. A name that is not the current one: 409 `conflict` (the version) or
 * `invalid_state` (the revision); nothing to approve: 409 `invalid_state`.
 */
export function decideApprove(consultation: ConsultationDoc, named: ApprovalNames): ApprovalWrite {
  const { version, revisionId } = named;
  const revision = consultation.pendingRevision;
  const current = versionOf(consultation);
  if (revisionId !== undefined && revision?.id !== revisionId)
    throw new InvalidState('That is not the pending revision of this consultation: read it again');
  if (version !== undefined && version !== current)
    throw new Conflict(`The consultation changed after version ${version} was read (it is at version ${current} now): read it again`);
  if (consultation.currentStatus === 'Pending') {
    if (version === undefined) throw new InvalidField('Name the version you read (version of the detail)', 'version');
    return {
      guard: { currentStatus: 'Pending', version },
      change: { set: { currentStatus: 'Approved', visibility: 'Published' } },
      revised: false,
    };
  }
  if (!revision) throw new InvalidState(`A ${consultation.currentStatus} consultation cannot be approved`);
  if (revisionId === undefined && version === undefined)
    throw new InvalidField('Name the pending revision you read (pendingRevision.id of the detail)', 'revisionId');
  return {
    guard: { currentStatus: 'Approved', pendingRevisionId: revision.id, ...(version === undefined ? {} : { version }) },
    change: { set: revision.changes, dropRevision: true },
    revised: true,
  };
}

/**
 * An approval with its audit entry: the `consultation.admin_action.recorded` event goes into the
 * consultation's outbox in the approval's own conditional write, so the approval and its entry
 * take effect together or not at all (a missed guard records nothing; a retry that finds it
 * approved is refused, and records nothing either). Before and after: the status and version,
 * and for a revision the fields it replaced.
 */
export function auditedApproval(
  write: ApprovalWrite,
  consultation: ConsultationDoc,
  admin: { id: string; role: 'buyer' | 'seller' | 'admin' },
  context: AdminRequestContext,
  now: Date,
): ApprovalWrite {
  const version = versionOf(consultation);
  const changes = consultation.pendingRevision?.changes ?? {};
  const replaced = Object.fromEntries(Object.keys(changes).map((field) => [field, consultation[field as keyof ConsultationDoc] ?? null]));
  const data = write.revised
    ? adminActionData(admin, 'consultation.approve_revision', { type: 'consultation', id: consultation._id }, context, now, {
        before: { version, revisionId: consultation.pendingRevision?.id ?? null, ...replaced },
        after: { version: version + 1, ...changes },
      })
    : adminActionData(admin, 'consultation.approve', { type: 'consultation', id: consultation._id }, context, now, {
        before: { currentStatus: consultation.currentStatus, visibility: consultation.visibility, version },
        after: { currentStatus: 'Approved', visibility: 'Published', version: version + 1 },
      });
  const event = makeEvent('consultation.admin_action.recorded', data, { source: 'consultation', correlationId: context.requestId });
  return { ...write, change: { ...write.change, event } };
}

/**
 * An admin's edit of another seller's consultation with its audit entry (`consultation.edit`):
 * the event goes into the consultation's outbox in the edit's own conditional write, so the edit
 * and its entry take effect together or not at all. Before and after are the fields the write
 * changes or drops (a pending revision by its id) and the version. An owner's own edit records
 * nothing: the write is returned as it was.
 */
export function auditedEdit(
  write: EditWrite,
  consultation: ConsultationDoc,
  user: { id: string; role: 'buyer' | 'seller' | 'admin' },
  context: AdminRequestContext,
  now: Date,
): EditWrite {
  if (user.role !== 'admin' || user.id === consultation.sellerId) return write;
  const version = versionOf(consultation);
  const valueOf = (field: string): unknown => {
    const value = consultation[field as keyof ConsultationDoc];
    if (field === 'pendingRevision') return (value as ConsultationDoc['pendingRevision'])?.id ?? null;
    return value ?? null;
  };
  const before: Record<string, unknown> = {};
  const after: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(write.change.set ?? {})) {
    const next = field === 'pendingRevision' ? (value as { id: string }).id : value;
    if (sameValue(valueOf(field), next)) continue;
    before[field] = valueOf(field);
    after[field] = next;
  }
  if (write.change.dropRevision) {
    before.pendingRevision = valueOf('pendingRevision');
    after.pendingRevision = null;
  }
  const data = adminActionData(user, 'consultation.edit', { type: 'consultation', id: consultation._id }, context, now, {
    before: { ...before, version },
    after: { ...after, version: version + 1 },
  });
  const event = makeEvent('consultation.admin_action.recorded', data, { source: 'consultation', correlationId: context.requestId });
  return { ...write, change: { ...write.change, event } };
}
