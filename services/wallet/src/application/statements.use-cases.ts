import { DEFAULT_CURRENCY } from '@mkt/contracts/wallet';
import type {
  EarningsQuery,
  PayoutHistoryQuery,
  StatementExportQuery,
  StatementQuery,
  TopUpHistoryQuery,
  TransferHistoryQuery,
} from '@mkt/contracts/wallet';
import type { AuthenticatedUser } from '@mkt/kit/http';
import type { Page } from '@mkt/kit/db';
import type { BookingHoldRepository } from '../db/booking-hold.repository';
import type { LedgerRepository, StatementFilter } from '../db/ledger.repository';
import type { LedgerEntryDoc, PayoutDoc, TopUpDoc, TransferDoc } from '../domain/records';
import type { PayoutRepository } from '../db/payout.repository';
import type { TopUpRepository } from '../db/topup.repository';
import type { TransferRepository } from '../db/transfer.repository';
import type { WalletRepository } from '../db/wallet.repository';
import { defaultEarningsFrom, summarizeEarnings, type EarningEntry, type Earnings } from '../domain/earnings';

/** A statement page as the handler shows it: the entries, their wallet's currency, the next page's cursor. */
export interface StatementResult {
  entries: LedgerEntryDoc[];
  currency: string;
  nextCursor: string | null;
}

const filterOf = (query: StatementExportQuery): StatementFilter => ({
  ...(query.type ? { types: query.type } : {}),
  ...(query.from ? { from: new Date(query.from) } : {}),
  ...(query.to ? { to: new Date(query.to) } : {}),
});

/**
 * What a user sees of their own money: their wallet's statement (its ledger entries) and their
 * top-ups, payouts and transfers. Only ever the caller's: every read is keyed by their user id,
 * so there is no one else's record to name.
 */
export class Statements {
  constructor(
    private readonly wallets: WalletRepository,
    private readonly ledger: LedgerRepository,
    private readonly topUps: TopUpRepository,
    private readonly payouts: PayoutRepository,
    private readonly transfers: TransferRepository,
    private readonly holds: BookingHoldRepository,
  ) {}

  /** A page of the caller's statement, newest first (empty when they have no wallet yet). */
  async page(user: AuthenticatedUser, query: StatementQuery): Promise<StatementResult> {
    const wallet = await this.wallets.find({ userId: user.id });
    if (!wallet) return { entries: [], currency: '', nextCursor: null };
    const page = await this.ledger.statementPage(wallet._id, {
      ...filterOf(query),
      ...(query.cursor !== undefined ? { beforeSeq: Number(query.cursor) } : {}),
      limit: query.limit,
    });
    return { entries: page.entries, currency: wallet.currency, nextCursor: page.nextSeq === null ? null : String(page.nextSeq) };
  }

  /** Every entry of the caller's statement the filters match, newest first, and their currency. */
  async export(
    user: AuthenticatedUser,
    query: StatementExportQuery,
  ): Promise<{ currency: string; entries: AsyncIterable<LedgerEntryDoc> }> {
    const wallet = await this.wallets.find({ userId: user.id });
    if (!wallet) return { currency: '', entries: (async function* () {})() };
    return { currency: wallet.currency, entries: this.ledger.statementEntries(wallet._id, filterOf(query)) };
  }

  /**
   * The caller's earnings as a seller: their open holds (ahead, settling), their balance, and
   * what their ledger credited from bookings and paid out within [from, to] — the statement's own
   * entries, so the two always agree — per consultation and per month.
   */
  async earnings(
    user: AuthenticatedUser,
    query: EarningsQuery,
    now = new Date(),
  ): Promise<Earnings & { currency: string; from: Date; to: Date; availableMinor: number }> {
    const from = query.from ? new Date(query.from) : defaultEarningsFrom(now);
    const to = query.to ? new Date(query.to) : now;
    const [wallet, open] = await Promise.all([this.wallets.find({ userId: user.id }), this.holds.openOfSeller(user.id)]);
    const docs = wallet ? await this.ledger.entriesMatching(wallet._id, { types: ['booking_capture', 'payout_settle'], from, to }) : [];
    const consultations = await this.holds.consultationsOf([
      ...new Set(docs.filter((d) => d.type === 'booking_capture').map((d) => d.reference)),
    ]);
    const entries: EarningEntry[] = docs.map((doc) => ({
      type: doc.type as EarningEntry['type'],
      availableDeltaMinor: doc.availableDeltaMinor,
      heldDeltaMinor: doc.heldDeltaMinor,
      postedAt: doc.postedAt ?? doc.createdAt,
      consultationId: consultations.get(doc.reference) ?? null,
    }));
    return {
      ...summarizeEarnings(open, entries, now),
      currency: wallet?.currency ?? DEFAULT_CURRENCY,
      from,
      to,
      availableMinor: wallet?.availableMinor ?? 0,
    };
  }

  topUpHistory(user: AuthenticatedUser, query: TopUpHistoryQuery): Promise<Page<TopUpDoc>> {
    return this.topUps.history(user.id, query);
  }

  payoutHistory(user: AuthenticatedUser, query: PayoutHistoryQuery): Promise<Page<PayoutDoc>> {
    return this.payouts.history(user.id, query);
  }

  transferHistory(user: AuthenticatedUser, query: TransferHistoryQuery): Promise<Page<TransferDoc>> {
    return this.transfers.history(user.id, query);
  }
}
