import { randomUUID } from 'node:crypto';
import {
  pageOffset,
  pagination,
  type AdminRequestContext,
  type ApprovalQueueQuery,
  type CreateConsultationBody,
  type PageQuery,
  type UpdateConsultationBody,
} from '@mkt/contracts/consultation';
import { Conflict, foundOr404, isOutcomeUnknown, NotFound } from '@mkt/kit/domain';
import type { AuthenticatedUser } from '@mkt/kit/http';
import { assertOwner, isAdmin, visibleTo, type References } from '../domain/access';
import {
  auditedApproval,
  auditedEdit,
  checkEdit,
  decideApprove,
  decideEdit,
  EDIT_ATTEMPTS,
  ownRecord,
  type ApprovalNames,
} from '../domain/consultation-edits';
import { checkNewConsultation, newConsultation, placesByKey, slotsToList, slotsWithPlaces } from '../domain/consultations';
import { ConsultationLimitReached } from '../domain/errors';
import type { ConsultationDoc, PricingDoc } from '../domain/records';
import type { ConsultationRepository } from '../db/consultation.repository';
import type { PlaceRepository } from '../db/place.repository';
import type { PricingRepository, RuleSetRepository } from '../db/setup.repository';

export interface ConsultationDeps {
  consultations: ConsultationRepository;
  ruleSets: RuleSetRepository;
  pricing: PricingRepository;
  places: PlaceRepository;
  references: References;
  /** How many consultations one seller may have (`MAX_CONSULTATIONS_PER_SELLER`). */
  maxPerSeller: number;
  /** Publishes an approval's audit entry right after its write (the sweeper otherwise). */
}

/** Consultations: created by sellers, edited (some edits wait for review), approved by admins, listed, their slots. */
export class Consultations {
  constructor(private readonly deps: ConsultationDeps) {}

  /**
   * A seller's new consultation, counted against `maxPerSeller` (422 `limit_reached` past it) by
   * one guarded increment before it is written; given back if the write fails.
   */
  async create(user: AuthenticatedUser, body: CreateConsultationBody): Promise<ConsultationDoc> {
    const { consultations, maxPerSeller } = this.deps;
    checkNewConsultation(user, body);
    const [ruleSet, pricing] = await Promise.all([
      this.deps.ruleSets.findByKey(body.ruleSetId),
      this.deps.pricing.findByKey(body.pricingId),
    ]);
    const record = newConsultation(user, body, { ruleSet, pricing }, this.deps.references);
    if (!(await consultations.takeQuota(record.sellerId, maxPerSeller))) throw new ConsultationLimitReached(maxPerSeller);
    try {
      return await consultations.create(record);
    } catch (err) {
      // An insert of unknown outcome (its answer lost, a socket timeout after the server applied
      // it) may have stored the consultation: then it is made, and answered as made (a retry
      // would make a second). Otherwise, or where the read fails too, the count is given back,
      // as for an insert refused.
      const stored = isOutcomeUnknown(err) ? await consultations.findById(record._id).catch(() => null) : null;
      if (stored) return stored;
      await consultations.giveBackQuota(record.sellerId);
      throw err;
    }
  }

  /** Anyone sees Approved+Published ones; a seller also their own; an admin all. */
  list(user: AuthenticatedUser | undefined, query: PageQuery & { status?: string; category?: string }) {
    return this.deps.consultations.page({ all: isAdmin(user), sellerId: user?.id ?? null }, query);
  }

  async detail(user: AuthenticatedUser | undefined, key: string): Promise<{ consultation: ConsultationDoc; pricing: PricingDoc | null }> {
    const consultation = visibleTo(user, await this.deps.consultations.findByKey(key));
    return { consultation, pricing: await this.deps.pricing.findById(consultation.pricingId) };
  }

  /**
   * Future slots between two local dates (the consultation's zone) with the places left. The
   * range (≤ 31 days) is checked by `SlotsQuery`; the answer holds the earliest
   * `MAX_SLOTS_PER_QUERY` (see `slotsToList`).
   */
  async freeSlots(user: AuthenticatedUser | undefined, key: string, from: string, to: string, now = new Date()) {
    const consultation = visibleTo(user, await this.deps.consultations.findByKey(key));
    const ruleSet = foundOr404(await this.deps.ruleSets.findById(consultation.ruleSetId), 'Rule set');
    const { slots, truncated } = slotsToList(consultation, ruleSet, from, to, now);
    const counters = await this.deps.places.takenBetween(consultation._id, slots);
    const taken = { bySlot: placesByKey(consultation._id, counters.slots), byDay: placesByKey(consultation._id, counters.days) };
    return { slots: slotsWithPlaces(consultation, ruleSet, slots, taken), truncated };
  }

  /**
   * The owner edits a consultation. The write is decided by `decideEdit` and guarded by what it was
   * decided on (the state and the pending revision read): when an admin's approval or another edit
   * lands in between, the edit is decided again on the new state — text never goes live unreviewed
   * because its consultation was approved between the read and the write. An admin's edit of
   * another seller's consultation carries its audit entry in that same write (`auditedEdit`).
   */
  async update(user: AuthenticatedUser, key: string, body: UpdateConsultationBody, context: AdminRequestContext): Promise<ConsultationDoc> {
    const { consultations, ruleSets, pricing } = this.deps;
    const first = await this.mustFind(key);
    assertOwner(user, first.sellerId, 'consultation');
    checkEdit(first, body);
    const set: Record<string, unknown> = { ...body };
    if (body.ruleSetId !== undefined) set.ruleSetId = ownRecord(await ruleSets.findByKey(body.ruleSetId), first.sellerId, 'ruleSetId')._id;
    if (body.pricingId !== undefined) set.pricingId = ownRecord(await pricing.findByKey(body.pricingId), first.sellerId, 'pricingId')._id;
    let consultation = first;
    for (let attempt = 0; attempt < EDIT_ATTEMPTS; attempt += 1) {
      const now = new Date();
      const write = auditedEdit(decideEdit(consultation, set, { revisionId: randomUUID(), now }), consultation, user, context, now);
      const updated = await consultations.updateGuarded(consultation._id, write.guard, write.change, write.touchesLive);
      if (updated) return updated;
      consultation = await this.mustFind(consultation._id);
    }
    throw new Conflict('The consultation kept changing while it was edited: send the edit again');
  }

  /**
   * An admin approves what they read (see `decideApprove`): one conditional write guarded by the
   * version or revision named. When it misses, someone moved the consultation after the read:
   * decided again on what it is now, which names the refusal (the version changed: 409
   * `conflict`; approved meanwhile: 409 `invalid_state`).
   */
  async approve(
    admin: AuthenticatedUser,
    key: string,
    named: ApprovalNames,
    context: AdminRequestContext,
  ): Promise<{ consultation: ConsultationDoc; revised: boolean }> {
    const consultation = await this.mustFind(key);
    const write = auditedApproval(decideApprove(consultation, named), consultation, admin, context, new Date());
    const approved = await this.deps.consultations.updateGuarded(consultation._id, write.guard, write.change);
    if (approved) return { consultation: approved, revised: write.revised };
    decideApprove(await this.mustFind(consultation._id), named);
    throw new Conflict('The consultation changed while it was approved: read it again');
  }

  /** The admins' queue: Pending consultations and pending revisions, oldest first, with both counts. */
  async approvalQueue(query: ApprovalQueueQuery) {
    const { items, total, counts } = await this.deps.consultations.approvalQueue(
      { kind: query.kind, sellerId: query.sellerId },
      pageOffset(query),
      query.limit,
    );
    return { items, counts, pagination: pagination(query, total) };
  }

  private async mustFind(key: string): Promise<ConsultationDoc> {
    const found = await this.deps.consultations.findByKey(key);
    if (!found) throw new NotFound('Consultation');
    return found;
  }
}
