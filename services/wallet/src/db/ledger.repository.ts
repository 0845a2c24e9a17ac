import { isDuplicateKey, isNeverSent } from '@mkt/kit/domain';
import type { Logger } from '@mkt/kit/logger';
import { mongo, type Collection } from 'mongoose';
import { backfilledLinks, chainKeyOf, genesisHead, nextLink, type ChainHead } from '../domain/ledger-chain';
import type { InflightOp, LedgerEntry, LedgerEntryDoc, LedgerEntryType } from '../domain/records';
import { recordsOf } from './collections';
import type { WalletModels } from './models';
import type { WalletRepository } from './wallet.repository';

const toLedgerDoc = (entry: LedgerEntry | InflightOp): LedgerEntryDoc => ({
  ...entry,
  _id: entry.id,
  createdAt: new Date(entry.createdAt),
});

/** An entry that is a link of its wallet's chain (every entry but those written before the chain and not numbered yet). */
const isLink = <T extends Pick<LedgerEntryDoc, 'seq'>>(entry: T): entry is T & ChainHead => typeof entry.seq === 'number';

/** What a statement lists: some entry types (all when none), a `postedAt` range (inclusive). */
export interface StatementFilter {
  types?: readonly LedgerEntryType[];
  from?: Date;
  to?: Date;
}

/** A statement page: its entries (newest first) and the `seq` the next page starts before (null: the last page). */
export interface StatementPage {
  entries: LedgerEntryDoc[];
  nextSeq: number | null;
}

interface StatementMongoFilter {
  walletId: string;
  seq: { $exists: true; $gte?: number; $lte?: number; $lt?: number };
  type?: { $in: readonly LedgerEntryType[] };
}

/** How many times an insert may lose its place in the chain to other ops before the op is left to the sweep. */
const CHAIN_ATTEMPTS = 1000;
/** Every this many lost places in a row, the places after the known head are read in a batch rather than one at a time. */
const STALE_AFTER = 4;
/** How many wallets' newest links a process keeps (a few hundred bytes each). */
const KNOWN_HEADS = 10_000;
/** How many places after a known head are read at once to catch up with links other processes wrote. */
const CATCH_UP_PLACES = 20;
const HEAD_FIELDS = { seq: 1, availableAfterMinor: 1, heldAfterMinor: 1, postedAt: 1 };
/** How many waiting entries of one wallet go in one insert at most. */
const INSERT_BATCH = 64;
/** An entry waiting for its wallet's writer, and the caller of `decide` it answers. */
interface Waiting {
  inflight: InflightOp;
  attempts: number;
  /**
   * An insert carrying this entry failed otherwise than on a unique key: it goes in an insert of
   * its own next, and a second such failure rejects it (a server that is down costs each entry
   * two tries, never a loop).
   */
  alone: boolean;
  /** Answered (resolved or rejected): a failure later in its batch's handling leaves it be. */
  settled: boolean;
  resolve: (decided: boolean) => void;
  reject: (err: unknown) => void;
}
/** How an ordered insert ended: all in, or stopped at the entry `inserted` — by a unique key, or another write error of that entry. */
type InsertOutcome =
  { inserted: number; refused: null } | { inserted: number; refused: 'key' } | { inserted: number; refused: 'failed'; err: unknown };
/**
 * Entries of an insert that failed otherwise than on a unique key, back to the front of their
 * wallet's queue in order, each to go alone; one that had gone alone already is rejected with
 * the error (its op stays in flight for its step's rerun or the sweep).
 */
function retryAlone(entries: Waiting[], queue: Waiting[], err: unknown): void {
  const again = entries.filter((waiting) => !waiting.alone);
  for (const waiting of entries) if (waiting.alone) waiting.reject(err);
  for (const waiting of again) waiting.alone = true;
  queue.unshift(...again);
}
/**
 * A command that got no answer within the socket timeout (`MONGO_SOCKET_TIMEOUT_MS`): sent, maybe
 * applied, never answered. A lone entry's try that ends so (its insert, or a read of its chain's
 * head or of a refusal), after its batch's did too, says the server takes commands and answers
 * none.
 */
function timedOut(err: unknown): boolean {
  return err instanceof mongo.MongoNetworkTimeoutError;
}
/** How many places one round of a statement's date-bound bisection reads (one command). */
const PROBES = 32;

/**
 * The append-only `ledger_entries`, keyed by op id: an op's entry is inserted once, ever, and
 * that insert is what decides the op applied (see `decide`). With the wallet's in-flight ops it
 * finishes an op whichever run gets there: the one that took it into flight, a repeat of its
 * step, or the sweep after a crash.
 */
export class LedgerRepository {
  private readonly LedgerEntry: WalletModels['LedgerEntry'];
  /** The same collection for the driver's commands. */
  private readonly entries: Collection<LedgerEntryDoc>;
  /** The newest link this process wrote or saw per wallet: where its next insert tries first. */
  private readonly heads = new Map<string, ChainHead>();
  /** The entries waiting for their wallet's writer (a wallet is here while its writer runs). */
  private readonly chains = new Map<string, Waiting[]>();
  /** The last wallet migration 0002's walk moved (`migrateLegacy`); none between walks. */
  private legacyAfter: string | undefined;

  constructor(
    models: Pick<WalletModels, 'LedgerEntry'>,
    private readonly wallets: WalletRepository,
    private readonly log: Logger,
  ) {
    this.LedgerEntry = models.LedgerEntry;
    this.entries = recordsOf(models.LedgerEntry);
  }

  /**
   * Does this in-flight op apply? Its entry is inserted with the run's token; the unique op id
   * lets exactly one insert of an op ever succeed, so the answer is true for the run whose token
   * the entry carries (on every ask: an insert that lost a race, or a retry, reads it back) and
   * false for every other run of the op (applied before, or by another run).
   *
   * The entry is inserted as the next link of its wallet's chain (README "Statement"): the place
   * after the chain's head and the balances after it, in the same insert, whose unique
   * `chainKey` lets one entry only take each place. The head is the last link this process
   * wrote or saw on the wallet (read when it knows none); a duplicate key that is not the op's
   * own means another op took that place: the entry there is read (by its unique key) as the
   * new head and the insert retried. A head gone far stale (another process wrote many links)
   * is caught up in batches of places after a few retries.
   *
   * Within this process a wallet's entries are inserted by one writer at a time (`chains`), so
   * its own ops never race for a place: the entries that arrive while an insert is on the wire
   * wait, and go together as the next places in one ordered insert (a hot wallet paid by many at
   * once costs one insert for many ops, not a lost place per racer).
   *
   * An insert that fails otherwise (the network, the server) fails only the entries it must: one
   * the server names by its index (a write error that is not a unique key) is tried again alone,
   * those before it went in and those after it wait for the next insert; a failure that says
   * nothing of what went in (a dropped connection, an error of the whole command) sends every
   * entry of the batch alone, once each, in order — one that went in meets its own op id and
   * is read back, one whose place another of the batch took follows the lost-place path above.
   * An entry that fails alone is rejected; its op stays in flight for its step's rerun or the sweep.
   */
  decide(inflight: InflightOp): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      const waiting: Waiting = {
        inflight,
        attempts: 0,
        alone: false,
        settled: false,
        resolve: (decided) => {
          waiting.settled = true;
          resolve(decided);
        },
        reject: (err) => {
          waiting.settled = true;
          reject(err);
        },
      };
      const chain = this.chains.get(inflight.walletId);
      if (chain) {
        chain.push(waiting);
        return;
      }
      const queue = [waiting];
      this.chains.set(inflight.walletId, queue);
      void this.drain(inflight.walletId, queue);
    });
  }

  /** Inserts a wallet's waiting entries, a batch at a time, until none waits (then the wallet has no writer). */
  private async drain(walletId: string, queue: Waiting[]): Promise<void> {
    let lostInARow = 0;
    while (queue.length > 0) {
      // Entries that must go alone are the queue's front (put back there), one per insert.
      const alone = queue[0]!.alone;
      const batch = queue.splice(0, alone ? 1 : INSERT_BATCH);
      try {
        lostInARow = await this.insertBatch(walletId, batch, queue, lostInARow);
      } catch (err) {
        const unanswered = batch.filter((waiting) => !waiting.settled);
        // A command never sent (no server to select, the client closed): none of the batch went
        // in, and a lone retry of each entry would wait as long again, one after another.
        if (isNeverSent(err) || (alone && timedOut(err))) {
          // The server is out of reach, or takes commands and answers none (a lone retry timed
          // out after its batch did): the batch, and the entries waiting to go alone after an
          // earlier failure, are answered now rather than each after a timeout of its own (their
          // ops stay in flight for their step's rerun or the sweep). The entries behind them try
          // the next insert: a server that hangs holds the wallet two tries per batch (each a
          // timeout, or two where the chain's head must be read first, and twice that where the
          // driver retries the write).
          for (const waiting of unanswered) waiting.reject(err);
          while (queue[0]?.alone) queue.shift()!.reject(err);
          continue;
        }
        // Nothing says which of the batch went in (the connection lost after the server applied
        // it, an error of the whole command, a read after it failed): each entry goes alone.
        retryAlone(unanswered, queue, err);
      }
    }
    this.chains.delete(walletId);
  }

  /**
   * One ordered insert of a batch as the next places of the chain: the entries that went in
   * answered; one refused by a unique key read (its op decided already, or its place taken: the
   * new head) and those after it put back; one the server refused otherwise tried alone next.
   * Answers how many places in a row the wallet's inserts have lost.
   */
  private async insertBatch(walletId: string, batch: Waiting[], queue: Waiting[], lostInARow: number): Promise<number> {
    const stale = lostInARow % STALE_AFTER === STALE_AFTER - 1;
    let head = stale ? await this.currentHead(walletId) : (this.heads.get(walletId) ?? (await this.head(walletId)));
    const now = new Date();
    const docs = batch.map(({ inflight }) => {
      const link = nextLink(inflight, head, now);
      head = link;
      return { ...toLedgerDoc(inflight), ...link };
    });
    const outcome = await this.insertInOrder(docs);
    const { inserted } = outcome;
    if (inserted > 0) this.remember(walletId, docs[inserted - 1]!);
    for (const done of batch.slice(0, inserted)) done.resolve(true);
    if (outcome.refused === null) return 0;
    const [refused, ...rest] = batch.slice(inserted);
    if (outcome.refused === 'failed') {
      // Those after it were not tried: they keep their turn, behind it.
      queue.unshift(...rest);
      retryAlone([refused!], queue, outcome.err);
      return inserted > 0 ? 0 : lostInARow;
    }
    // A unique key: its own op id (decided already), or its place taken.
    const entry = await this.entries.findOne({ _id: refused!.inflight.id }, { projection: { token: 1, walletId: 1, ...HEAD_FIELDS } });
    if (entry) {
      // Its link is one of the wallet's chain (a lone retry of an entry whose insert went in
      // unanswered finds it so): the next entry's place is after it at least. Only moved forward
      // from a head this process knows: with none, the repeat of an old op is no better a head
      // than the chain's own, read when needed.
      if (isLink(entry) && entry.walletId === walletId && this.heads.has(walletId)) this.remember(walletId, entry);
      refused!.resolve(entry.token === refused!.inflight.token);
      queue.unshift(...rest);
      return lostInARow;
    }
    const lost = inserted > 0 ? 1 : lostInARow + 1;
    const place = docs[inserted]!;
    const taken = await this.entries.findOne({ chainKey: place.chainKey }, { projection: HEAD_FIELDS });
    if (taken && isLink(taken)) this.remember(walletId, taken);
    else this.heads.delete(walletId);
    refused!.attempts += 1;
    if (refused!.attempts >= CHAIN_ATTEMPTS)
      refused!.reject(new Error(`ledger chain of wallet ${walletId} busy; the op stays in flight for the sweep`));
    else queue.unshift(refused!);
    queue.splice(1, 0, ...rest);
    return lost;
  }

  /**
   * Inserts entries in order, stopping at the first refused: how many went in, and why the next
   * was refused — a unique key, or another write error the server answered for that entry (the
   * entries after it not tried). Any other error, which says nothing of what went in, is thrown.
   */
  private async insertInOrder(docs: LedgerEntryDoc[]): Promise<InsertOutcome> {
    try {
      if (docs.length === 1) await this.entries.insertOne(docs[0]!);
      else await this.entries.insertMany(docs, { ordered: true });
      return { inserted: docs.length, refused: null };
    } catch (err) {
      if (docs.length === 1) {
        if (isDuplicateKey(err)) return { inserted: 0, refused: 'key' };
        throw err;
      }
      const writeErrors = (err as { writeErrors?: unknown }).writeErrors;
      const errors = (Array.isArray(writeErrors) ? writeErrors : writeErrors ? [writeErrors] : []) as Array<{
        index?: number;
        code?: number;
        err?: unknown;
      }>;
      const first = errors[0];
      // The refused entry's index is trusted only when the server's count of inserted entries
      // agrees (those before it in, none after): any other answer is an unknown outcome.
      if (
        !(err instanceof mongo.MongoBulkWriteError) ||
        errors.length !== 1 ||
        typeof first?.index !== 'number' ||
        err.insertedCount !== first.index
      )
        throw err;
      if (first.code !== 11000) return { inserted: first.index, refused: 'failed', err };
      return { inserted: first.index, refused: 'key' };
    }
  }

  /** Keeps a wallet's newest known link (a bounded map: the least recently written wallets go first). */
  private remember(walletId: string, head: ChainHead): void {
    const known = this.heads.get(walletId);
    if (known && known.seq >= head.seq) return;
    this.heads.delete(walletId);
    this.heads.set(walletId, {
      seq: head.seq,
      availableAfterMinor: head.availableAfterMinor,
      heldAfterMinor: head.heldAfterMinor,
      postedAt: head.postedAt,
    });
    if (this.heads.size > KNOWN_HEADS) this.heads.delete(this.heads.keys().next().value!);
  }

  /**
   * The last link of a wallet's chain read from the database: the highest `seq` (an entry
   * without one sorts below every number). None at all: place 0 of an empty wallet. Only
   * entries written before the chain: place 0 with what they sum to (read once, by the chain's
   * first entry).
   */
  private async head(walletId: string): Promise<ChainHead> {
    const last = await this.entries.findOne({ walletId }, { sort: { seq: -1 }, projection: HEAD_FIELDS });
    if (!last) return genesisHead(0, 0);
    if (isLink(last)) return last;
    const [sums] = await this.LedgerEntry.aggregate<{ available: number; held: number }>([
      { $match: { walletId } },
      { $group: { _id: null, available: { $sum: '$availableDeltaMinor' }, held: { $sum: '$heldDeltaMinor' } } },
    ]);
    return genesisHead(sums?.available ?? 0, sums?.held ?? 0);
  }

  /**
   * Finishes an op in flight on a wallet: decided → committed, else rolled back (its token's
   * write, once). Safe at any time and any number of times, beside any other run.
   */
  async finish(walletId: string, inflight: InflightOp): Promise<boolean> {
    const decided = await this.decide(inflight);
    if (decided) await this.wallets.commit(walletId, inflight);
    else await this.wallets.rollback(walletId, inflight);
    return decided;
  }

  /** Is this op's entry in the ledger (the op applied, or deciding its commit)? */
  async has(opId: string): Promise<boolean> {
    return (await this.entries.findOne({ _id: opId }, { projection: { _id: 1 } })) !== null;
  }

  /** Has this op been applied to the wallet? An op of it in flight is finished first. */
  async hasApplied(walletId: string, opId: string): Promise<boolean> {
    await this.flush(walletId, opId);
    return this.has(opId);
  }

  /** Finishes the ops in flight on a wallet (all, or the one op given). */
  async flush(walletId: string, opId?: string): Promise<void> {
    const state = await this.wallets.guardState(walletId);
    for (const inflight of state?.inflight ?? []) if (!opId || inflight.id === opId) await this.finish(walletId, inflight);
  }

  /** The sweep: ops left in flight since before `cutoff` (their run died) are finished. */
  async sweep(cutoff: Date): Promise<void> {
    for (const wallet of await this.wallets.inflightSince(cutoff))
      for (const inflight of wallet.inflight)
        await this.finish(wallet._id, inflight).catch((err: unknown) =>
          this.log.warn({ err, walletId: wallet._id, opId: inflight.id }, 'finishing an op in flight failed; the sweep will retry'),
        );
  }

  /**
   * Moves a wallet of the previous release to this protocol: fenced (no op applies meanwhile),
   * its pending entries into the ledger (an entry there already is kept once), then its old
   * arrays dropped. Idempotent: a crash anywhere is finished by running it again.
   */
  async migrate(walletId: string): Promise<void> {
    await this.wallets.fenceLegacy(walletId);
    const entries = await this.wallets.legacyEntries(walletId);
    if (entries.length > 0) await this.appendEntries(entries);
    await this.wallets.dropLegacy(walletId);
  }

  /**
   * Migration 0002's pass: the next batch of wallets still in the previous form, in `_id` order
   * from where the last batch ended (`legacyAfter`), so a pass over n wallets reads each once
   * rather than passing every wallet already moved again for each batch. At the end of a pass
   * (none after the cursor) the walk starts from the first wallet again, and ends only when a pass
   * from the first finds none: a wallet a process of the previous release made behind the cursor
   * meanwhile is moved too (so is one opened later, by the first op that reaches it). A batch
   * that fails starts the walk over.
   */
  async migrateLegacy(limit = 200): Promise<number> {
    try {
      let ids = await this.wallets.legacyIds(limit, this.legacyAfter);
      if (ids.length === 0 && this.legacyAfter !== undefined) ids = await this.wallets.legacyIds(limit);
      for (const walletId of ids) await this.migrate(walletId);
      this.legacyAfter = ids.at(-1);
      return ids.length;
    } catch (err) {
      this.legacyAfter = undefined;
      throw err;
    }
  }

  /**
   * A page of a wallet's statement, newest first: the entries of its chain (`seq`) of the types
   * asked, written within [from, to], older than `beforeSeq` (the previous page's last). One
   * read more than the page says whether another follows. A date bound becomes a `seq` bound by
   * bisection over the chain's unique keys (`statementFilter`), so no page scans the history.
   */
  async statementPage(walletId: string, query: StatementFilter & { beforeSeq?: number; limit: number }): Promise<StatementPage> {
    const filter = await this.statementFilter(walletId, query);
    if (!filter) return { entries: [], nextSeq: null };
    if (query.beforeSeq !== undefined) filter.seq = { ...filter.seq, $lt: query.beforeSeq };
    const docs = filter.type
      ? await this.filteredPage(filter, query.limit + 1)
      : await this.chainPage(walletId, filter.seq, query.limit + 1);
    const entries = docs.slice(0, query.limit);
    return { entries, nextSeq: docs.length > query.limit ? entries[entries.length - 1]!.seq! : null };
  }

  /** A page of the entries of some types: the `{walletId, type, seq}` index, newest first. */
  private filteredPage(filter: StatementMongoFilter, count: number): Promise<LedgerEntryDoc[]> {
    return this.LedgerEntry.find(filter).sort({ seq: -1 }).limit(count).lean();
  }

  /**
   * A page of every entry: the chain has no gap, so the page's places are known — from below
   * the bound (or the chain's head) down `count` places — and read by their unique keys, one
   * command that costs the same however long the chain (even on a server that walks no range
   * of a non-unique index).
   */
  private async chainPage(walletId: string, bounds: StatementMongoFilter['seq'], count: number): Promise<LedgerEntryDoc[]> {
    const top = Math.min(bounds.$lt ?? Infinity, (bounds.$lte ?? Infinity) + 1, (await this.currentHead(walletId)).seq + 1);
    const bottom = bounds.$gte ?? -Infinity;
    const keys: string[] = [];
    for (let seq = top - 1; seq >= bottom && keys.length < count; seq -= 1) keys.push(chainKeyOf(walletId, seq));
    if (keys.length === 0) return [];
    const docs = await this.LedgerEntry.find({ chainKey: { $in: keys } }).lean();
    return docs.sort((a, b) => b.seq! - a.seq!);
  }

  /**
   * The chain's newest link now: the places just after the newest one this process knows, read
   * by their unique keys in one command; when it knows none, or more than those were written
   * since (another process's), read by the sorted index.
   */
  private async currentHead(walletId: string): Promise<ChainHead> {
    const known = this.heads.get(walletId);
    let head = known ?? (await this.head(walletId));
    if (known) {
      const keys = Array.from({ length: CATCH_UP_PLACES }, (_, i) => chainKeyOf(walletId, known.seq + 1 + i));
      const newer = await this.entries.find({ chainKey: { $in: keys } }, { projection: HEAD_FIELDS }).toArray();
      // Read by their places' keys: every one is a link.
      const links = newer.filter(isLink);
      if (newer.length === CATCH_UP_PLACES) head = await this.head(walletId);
      else if (links.length > 0) head = links.reduce((a, b) => (a.seq > b.seq ? a : b));
    }
    if (head.seq > 0) this.remember(walletId, head);
    return head;
  }

  /** Every entry of a wallet's statement the filter matches, newest first, read in batches (the CSV export). */
  async *statementEntries(walletId: string, query: StatementFilter): AsyncGenerator<LedgerEntryDoc> {
    const filter = await this.statementFilter(walletId, query);
    if (!filter) return;
    for await (const doc of this.LedgerEntry.find(filter).sort({ seq: -1 }).lean().cursor({ batchSize: 500 })) yield doc as LedgerEntryDoc;
  }

  /** A wallet's entries the filter matches (every one: the caller bounds the range), their amounts, type, cause and time only. */
  async entriesMatching(walletId: string, query: StatementFilter): Promise<LedgerEntryDoc[]> {
    const filter = await this.statementFilter(walletId, query);
    if (!filter) return [];
    return this.LedgerEntry.find(filter, { type: 1, availableDeltaMinor: 1, heldDeltaMinor: 1, reference: 1, postedAt: 1 }).lean();
  }

  /**
   * The query of a statement's filter; null when its date range holds no entry. A date bound
   * becomes a `seq` bound: `postedAt` never goes back along the chain and the chain has no gap,
   * so the first place posted at or after `from` and the last posted at or before `to` are
   * found by bisection over the places, read by their unique keys (`chainBound`): a few reads
   * that cost the same however long the history, on any server.
   */
  private async statementFilter(walletId: string, query: StatementFilter): Promise<StatementMongoFilter | null> {
    const seq: StatementMongoFilter['seq'] = { $exists: true };
    if (query.from || query.to) {
      const { from, to } = query;
      const chain = await this.chainExtent(walletId);
      if (!chain) return null;
      const [first, afterLast] = await Promise.all([
        from ? this.chainBound(walletId, chain, (postedAt) => postedAt >= from.getTime()) : chain.low,
        to ? this.chainBound(walletId, chain, (postedAt) => postedAt > to.getTime()) : chain.high + 1,
      ]);
      if (first > chain.high || afterLast <= chain.low || first >= afterLast) return null;
      seq.$gte = first;
      seq.$lte = afterLast - 1;
    }
    return { walletId, seq, ...(query.types?.length ? { type: { $in: query.types } } : {}) };
  }

  /** The `postedAt` (ms) of the chain's places among `places` that exist, by their unique keys in one read. */
  private async postedAtOf(walletId: string, places: number[]): Promise<Map<number, number>> {
    const keys = places.map((place) => chainKeyOf(walletId, place));
    const docs = await this.entries.find({ chainKey: { $in: keys } }, { projection: { seq: 1, postedAt: 1 } }).toArray();
    return new Map(docs.filter(isLink).map((doc) => [doc.seq, doc.postedAt.getTime()]));
  }

  /**
   * The chain's places, `low`…`high` with no gap (null: no entry is numbered yet). The head is
   * the newest; below place 1 lie the entries the backfill numbered (0, −1, …), whose lowest is
   * found among doubling depths, then by bisection.
   */
  private async chainExtent(walletId: string): Promise<{ low: number; high: number } | null> {
    const high = (await this.currentHead(walletId)).seq;
    const depths = Array.from({ length: 48 }, (_, i) => 1 - 2 ** i); // 0, −1, −3, −7, …
    const found = await this.postedAtOf(walletId, depths);
    const deepest = depths.findIndex((place) => !found.has(place));
    if (deepest === 0) return high >= 1 ? { low: 1, high } : null;
    const low = await this.leastPlace(walletId, depths[deepest]! + 1, depths[deepest - 1]!, (_postedAt) => true);
    return { low, high: Math.max(high, 0) };
  }

  /** The first place of the chain whose `postedAt` passes `test` (monotone along it); `high + 1` when none does. */
  private chainBound(walletId: string, chain: { low: number; high: number }, test: (postedAt: number) => boolean): Promise<number> {
    return this.leastPlace(walletId, chain.low, chain.high + 1, test);
  }

  /**
   * The least place in [lo, hi] that exists and whose `postedAt` passes `test`, where the places
   * that do are the upper part of the range and `hi` counts as one. Each round reads up to
   * `PROBES` places spread over what is left, by their unique keys in one command, and keeps the
   * part between the last that fails and the first that passes.
   */
  private async leastPlace(walletId: string, lo: number, hi: number, test: (postedAt: number) => boolean): Promise<number> {
    while (lo < hi) {
      const span = hi - lo;
      const step = Math.max(1, Math.ceil(span / (PROBES + 1)));
      const probes: number[] = [];
      for (let place = lo; place < hi; place += step) probes.push(place);
      const posted = await this.postedAtOf(walletId, probes);
      let passed = hi;
      let failed = lo - 1;
      for (const place of probes) {
        const at = posted.get(place);
        if (at !== undefined && test(at)) {
          passed = place;
          break;
        }
        failed = place;
      }
      lo = failed + 1;
      hi = passed;
    }
    return hi;
  }

  /** A wallet's entries in the ledger (tests and audits sum them against its balances). */
  async entriesOf(walletId: string): Promise<LedgerEntry[]> {
    const docs = await this.LedgerEntry.find({ walletId }).lean();
    return docs.map(({ _id, createdAt, ...entry }) => ({ ...entry, id: _id, createdAt: createdAt.toISOString() }));
  }

  /**
   * Numbers a wallet's entries written before the chain (none of `seq`): 0 for the newest, −1,
   * −2, … before it, each with the balances summed up to it; written newest first, so a chain
   * starting meanwhile reads place 0 with the same balances it would have summed. Idempotent;
   * answers how many it numbered. To run once over every wallet after this release is out.
   */
  async backfillChain(walletId: string): Promise<number> {
    // Every entry before the chain, numbered or not, in the order that numbers them: the same
    // numbers on every run, so a run finishing one a crash stopped writes what it would have.
    const docs = await this.LedgerEntry.find({ walletId, $or: [{ seq: { $exists: false } }, { seq: { $lte: 0 } }] })
      .sort({ createdAt: 1, _id: 1 })
      .lean();
    const links = backfilledLinks(docs.map(({ _id, createdAt, ...entry }) => ({ ...entry, id: _id, createdAt: createdAt.toISOString() })));
    let numbered = 0;
    for (const { id, ...link } of links.reverse()) {
      const { modifiedCount } = await this.LedgerEntry.updateOne({ _id: id, seq: { $exists: false } }, { $set: link });
      numbered += modifiedCount;
    }
    return numbered;
  }

  /** Appends entries in one insert; ones already there (moved before a crash, or by a racing move) are kept once. */
  private async appendEntries(entries: LedgerEntry[]): Promise<void> {
    try {
      await this.entries.insertMany(entries.map(toLedgerDoc), { ordered: false });
    } catch (err) {
      const writeErrors = (err as { writeErrors?: unknown }).writeErrors;
      const errors = Array.isArray(writeErrors) ? writeErrors : writeErrors ? [writeErrors] : [err];
      if (!errors.every((e) => isDuplicateKey(e) || isDuplicateKey((e as { err?: unknown }).err))) throw err;
    }
  }
}
