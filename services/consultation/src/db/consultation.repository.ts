import type { FilterQuery, UpdateQuery } from 'mongoose';
import type { PageQuery } from '@mkt/contracts/consultation';
import { byIdOrReference, findPage } from '@mkt/kit/db';
import { eventsWritten } from '@mkt/kit/bus';
import { isDuplicateKey } from '@mkt/kit/domain';
import type { ConsultationDoc, PricingDoc, RuleSetDoc } from '../domain/records';
import type { ConsultationChange, ConsultationGuard } from '../domain/consultation-edits';
import type { OfferShape } from '../domain/rule-sets';
import { collectionOf, findByKey } from './collections';
import type { ConsultationModels } from './models';

/**
 * The filter of a guard: the status; the pending revision by its id (null: none, missing or
 * null); the version (0: none stored yet, so the field is missing).
 */
export function guardFilter(id: string, guard: ConsultationGuard): FilterQuery<ConsultationDoc> {
  const { currentStatus, pendingRevisionId, version } = guard;
  return {
    _id: id,
    currentStatus,
    ...(pendingRevisionId === undefined
      ? {}
      : pendingRevisionId === null
        ? { pendingRevision: null }
        : { 'pendingRevision.id': pendingRevisionId }),
    ...(version === undefined ? {} : version === 0 ? { version: { $exists: false } } : { version }),
  };
}

/** The update of a change: its fields set, the revision unset, the version moved on, the event pushed to the outbox. */
export function changeUpdate(change: ConsultationChange): UpdateQuery<ConsultationDoc> {
  return {
    ...(change.set ? { $set: change.set } : {}),
    ...(change.dropRevision ? { $unset: { pendingRevision: '' } } : {}),
    $inc: { version: 1 },
    ...(change.event ? { $push: { pendingEvents: change.event } } : {}),
  };
}

/** The `consultations` collection. */
export class ConsultationRepository {
  constructor(private readonly models: Pick<ConsultationModels, 'Consultation' | 'RuleSet' | 'Pricing' | 'SellerQuota'>) {}

  private get model() {
    return this.models.Consultation;
  }

  findByKey(key: string): Promise<ConsultationDoc | null> {
    return findByKey(this.model, key);
  }

  /**
   * What a booking needs read, in one command (three before): the consultation a key
   * names with its rule set and its pricing joined (`$lookup` on their ids). Nulls where one
   * does not exist.
   */
  async forBooking(key: string): Promise<{ consultation: ConsultationDoc | null; ruleSet: RuleSetDoc | null; pricing: PricingDoc | null }> {
    const [found] = await this.model.collection
      .aggregate<ConsultationDoc & { _ruleSet: RuleSetDoc[]; _pricing: PricingDoc[] }>([
        { $match: byIdOrReference(key) },
        { $limit: 1 },
        { $lookup: { from: this.models.RuleSet.collection.collectionName, localField: 'ruleSetId', foreignField: '_id', as: '_ruleSet' } },
        { $lookup: { from: this.models.Pricing.collection.collectionName, localField: 'pricingId', foreignField: '_id', as: '_pricing' } },
      ])
      .toArray();
    if (!found) return { consultation: null, ruleSet: null, pricing: null };
    const { _ruleSet, _pricing, ...consultation } = found;
    return { consultation: consultation as ConsultationDoc, ruleSet: _ruleSet[0] ?? null, pricing: _pricing[0] ?? null };
  }

  findById(id: string): Promise<ConsultationDoc | null> {
    return this.model.findById(id).lean<ConsultationDoc>();
  }

  async referenceOf(id: string): Promise<string | undefined> {
    return (await this.model.findById(id, { referenceId: 1 }).lean())?.referenceId;
  }

  /** The id of the consultation a key names, or null. */
  async idOf(key: string): Promise<string | null> {
    return (await this.model.findOne(byIdOrReference(key), { _id: 1 }).lean())?._id ?? null;
  }

  /** The consultations of some keys (ids or references), in no order. */
  findByKeys(keys: string[]): Promise<ConsultationDoc[]> {
    return this.model.find({ $or: [{ _id: { $in: keys } }, { referenceId: { $in: keys } }] }).lean<ConsultationDoc[]>();
  }

  /**
   * What `utilization` needs of the consultations on some rule sets, in one command: per rule set
   * and duration, the sum of their capacities (grouped by the database: the answer grows with the
   * distinct durations, not with the consultations).
   */
  async shapesOnRuleSets(ruleSetIds: string[]): Promise<Map<string, OfferShape[]>> {
    const groups = await this.model.collection
      .aggregate<{ _id: { ruleSetId: string; duration: number }; capacity: number }>([
        { $match: { ruleSetId: { $in: ruleSetIds } } },
        { $group: { _id: { ruleSetId: '$ruleSetId', duration: '$duration' }, capacity: { $sum: '$maxCapacity' } } },
      ])
      .toArray();
    const shapes = new Map<string, OfferShape[]>(ruleSetIds.map((id) => [id, []]));
    for (const { _id, capacity } of groups) shapes.get(_id.ruleSetId)?.push({ duration: _id.duration, capacity });
    return shapes;
  }

  /**
   * Counts one more consultation of a seller unless they have `max` already: one guarded
   * increment (`consultations < max` in its filter), so of racing creations at the limit only as
   * many as it leaves pass. A seller's first counter starts from the consultations they have
   * (all made before it existed: later ones are counted by it); racing first creations insert it
   * once. False at the limit.
   */
  async takeQuota(sellerId: string, max: number): Promise<boolean> {
    const quotas = this.models.SellerQuota;
    const increment = async () =>
      (await quotas.updateOne({ _id: sellerId, consultations: { $lt: max } }, { $inc: { consultations: 1 } })).modifiedCount === 1;
    if (await increment()) return true;
    if ((await quotas.exists({ _id: sellerId })) === null) {
      // No counter yet: every consultation the seller has was made before it existed.
      const existing = await this.model.countDocuments({ sellerId });
      try {
        await collectionOf(quotas).insertOne({ _id: sellerId, consultations: existing });
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
    }
    // Asked again: a racing first creation may have made the counter since.
    return increment();
  }

  /** Gives back a count `takeQuota` took for a consultation that was not made after all. */
  async giveBackQuota(sellerId: string): Promise<void> {
    await this.models.SellerQuota.updateOne({ _id: sellerId, consultations: { $gt: 0 } }, { $inc: { consultations: -1 } });
  }

  async create(record: Omit<ConsultationDoc, 'createdAt' | 'updatedAt' | 'averageRating' | 'totalReviews'>): Promise<ConsultationDoc> {
    return (await this.model.create(record)).toObject();
  }

  /**
   * A page of consultations: Approved+Published ones, plus the seller's own (`sellerId`), or all
   * (`all`: an admin); `status` and `category` narrow it.
   */
  page(scope: { all: boolean; sellerId: string | null }, query: PageQuery & { status?: string; category?: string }) {
    const listed = { currentStatus: 'Approved', visibility: 'Published' };
    const seen = scope.all ? {} : scope.sellerId ? { $or: [listed, { sellerId: scope.sellerId }] } : listed;
    const filter: Record<string, unknown> = { ...seen };
    if (query.status) filter.currentStatus = query.status;
    if (query.category) filter.category = query.category;
    return findPage(this.model, filter, query, { createdAt: -1 });
  }

  /**
   * One conditional write (an edit or an approval): null when `guard` no longer holds. An audit
   * entry the write pushed is published right after it (`eventsWritten`).
   */
  async updateGuarded(
    id: string,
    guard: ConsultationGuard,
    change: ConsultationChange,
    touchesLive = true,
  ): Promise<ConsultationDoc | null> {
    const updated = await this.model
      .findOneAndUpdate(guardFilter(id, guard), changeUpdate(change), { new: true, timestamps: touchesLive })
      .lean<ConsultationDoc>();
    if (updated && change.event) eventsWritten(this.model, updated._id);
    return updated;
  }

  async setRating(id: string, summary: { averageRating: number; totalReviews: number }): Promise<void> {
    await this.model.updateOne({ _id: id }, { $set: summary });
  }

  /**
   * The admins' approval queue: Pending consultations (on `{currentStatus, updatedAt}`) and
   * Approved ones with a pending revision (on the sparse `pendingRevision.submittedAt` index),
   * oldest first, with how many of each wait.
   */
  async approvalQueue(
    filter: { kind?: 'consultation' | 'revision'; sellerId?: string },
    offset: number,
    limit: number,
  ): Promise<{ items: ConsultationDoc[]; total: number; counts: { consultations: number; revisions: number } }> {
    const seller = filter.sellerId ? { sellerId: filter.sellerId } : {};
    const pending = { currentStatus: 'Pending', ...seller };
    const revised = { 'pendingRevision.submittedAt': { $exists: true, $ne: null }, currentStatus: 'Approved', ...seller };
    const where = filter.kind === 'consultation' ? pending : filter.kind === 'revision' ? revised : { $or: [pending, revised] };
    const [items, total, consultations, revisions] = await Promise.all([
      this.model.find(where).sort({ updatedAt: 1, _id: 1 }).skip(offset).limit(limit).lean<ConsultationDoc[]>(),
      this.model.countDocuments(where),
      this.model.countDocuments(pending),
      this.model.countDocuments(revised),
    ]);
    return { items, total, counts: { consultations, revisions } };
  }
}
