import type { PayoutHistoryQuery, StatementExportQuery, StatementQuery, TopUpHistoryQuery, TransferHistoryQuery } from '@mkt/contracts';
import type { AuthenticatedUser, Page } from '@mkt/kit';
import type { LedgerRepository, StatementFilter } from '../db/ledger.repository';
import type { LedgerEntryDoc } from '../db/models';
import type { PayoutRepository } from '../db/payout.repository';
import type { TopUpRepository } from '../db/topup.repository';
import type { TransferRepository } from '../db/transfer.repository';
import type { WalletRepository } from '../db/wallet.repository';
import type { PayoutDoc, TopUpDoc, TransferDoc } from '../domain/records';

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
