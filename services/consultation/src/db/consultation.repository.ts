import type { PageQuery } from '@mkt/contracts';
import { byIdOrReference, findPage } from '@mkt/kit';
import type { ConsultationDoc, PricingDoc, RuleSetDoc } from '../domain/records';
import { findByKey } from './keys';
import type { ConsultationModels } from './models';

/** The `consultations` collection. */
export class ConsultationRepository {
  constructor(private readonly models: Pick<ConsultationModels, 'Consultation' | 'RuleSet' | 'Pricing'>) {}

  private get model() {
    return this.models.Consultation;
  }

  findByKey(key: string): Promise<ConsultationDoc | null> {
    return findByKey(this.model, key);
  }

  /**
   * What a booking needs read, in one command (issue 25; three before): the consultation a key
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

  /** What `utilization` needs of the consultations on a rule set. */
  onRuleSet(ruleSetId: string): Promise<Array<Pick<ConsultationDoc, 'duration' | 'maxCapacity'>>> {
    return this.model.find({ ruleSetId }, { duration: 1, maxCapacity: 1 }).lean<ConsultationDoc[]>();
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

  /** One conditional write (an edit or an approval): null when `guard` no longer holds. */
  updateGuarded(
    id: string,
    guard: Record<string, unknown>,
    update: { $set?: Record<string, unknown>; $unset?: Record<string, ''> },
    touchesLive = true,
  ): Promise<ConsultationDoc | null> {
    return this.model.findOneAndUpdate({ _id: id, ...guard }, update, { new: true, timestamps: touchesLive }).lean<ConsultationDoc>();
  }

  async setRating(id: string, summary: { averageRating: number; totalReviews: number }): Promise<void> {
    await this.model.updateOne({ _id: id }, { $set: summary });
  }
}
