import type { BookingFactRepository } from '../db/booking-fact.repository';
import type { RelationshipRepository } from '../db/relationship.repository';
import type { KnownUserRepository } from '../db/user.repository';
import { pairsOf, type ProjectionUpdate } from '../domain/projection';
import type { KnownUser, Pair } from '../domain/records';
import { sameTotals, totalsOf, type Totals } from '../domain/totals';

/** Rounds of read-after-write before a pair's totals are left to its next event (never reached in practice). */
const SETTLE_ROUNDS = 5;

/** The CRM's projection of other services' events: users, booking facts and the totals they give. */
export class Projection {
  constructor(
    private readonly relationships: RelationshipRepository,
    private readonly facts: BookingFactRepository,
    private readonly users: KnownUserRepository,
  ) {}

  /**
   * Applies what one event decided (domain/projection.ts): the booking's fact merged, then per
   * pair its facts read (when the totals are recomputed) and its relationship written in one
   * upsert, then the facts read again (settleTotals) — four commands for a booking event
   * (six before).
   */
  async apply(update: ProjectionUpdate): Promise<void> {
    if (update.fact) await this.facts.merge(update.fact);
    for (const pair of update.pairs) {
      const totals = update.recompute ? totalsOf(await this.facts.ofPair(pair)) : undefined;
      await this.relationships.project(pair, { totals, sellerCategory: update.sellerCategory, interactionAt: update.interactionAt });
      if (totals) await this.settleTotals(pair, totals);
    }
  }

  /**
   * Another event of the same pair, handled at the same time (the consumer takes several at once;
   * replicas too), may have written totals from facts read before this event's fact was merged,
   * after this handler wrote its own: the totals are read again after the write and written
   * again until the facts and the totals agree. The last write of the pair is then always followed
   * by a read of every fact merged before it (one read more per event; `written` is what this
   * handler last wrote).
   */
  private async settleTotals(pair: Pair, written: Totals): Promise<void> {
    for (let round = 0; round < SETTLE_ROUNDS; round += 1) {
      const now = totalsOf(await this.facts.ofPair(pair));
      if (sameTotals(now, written)) return;
      await this.relationships.setTotals(pair, now);
      written = now;
    }
  }

  /** A pair's totals from its booking facts (idempotent; also the rebuild). */
  async recompute(pair: Pair): Promise<void> {
    await this.relationships.setTotals(pair, totalsOf(await this.facts.ofPair(pair)));
  }

  async registerUser(user: KnownUser): Promise<void> {
    await this.users.upsert(user);
  }

  /** Recomputes every relationship's totals from the stored facts; the number of pairs. */
  async rebuildAll(): Promise<number> {
    const pairs = pairsOf(await this.facts.pairs());
    for (const pair of pairs) {
      await this.relationships.ensure(pair);
      await this.recompute(pair);
    }
    return pairs.length;
  }
}
