import type { Statements } from '../application/statements.use-cases';
import { csvHeader, csvRow } from '../domain/statement-csv';
import type { WalletOperations } from './operations';
import { payoutHistoryView, statementEntryView, topUpHistoryView, transferHistoryView } from './views';

/**
 * The caller's money: `GET /v1/wallet/transactions` (statement pages), `GET
 * /v1/wallet/transactions.csv` (its export, written as it is read: `produces` csv), the caller's
 * earnings, and the top-up, payout and transfer histories.
 */
export function statementOperations(
  statements: Statements,
): WalletOperations<
  'listWalletTransactions' | 'getWalletTransactionsCsv' | 'getMyEarnings' | 'listMyTopups' | 'listMyPayoutRequests' | 'listMyTransfers'
> {
  return {
    listWalletTransactions: async ({ query }, { user }) => {
      const page = await statements.page(user, query);
      return { data: { entries: page.entries.map((entry) => statementEntryView(entry, page.currency)), nextCursor: page.nextCursor } };
    },
    getWalletTransactionsCsv: async ({ query }, { res, user }) => {
      const { currency, entries } = await statements.export(user, query);
      res.status(200);
      res.setHeader('Content-Type', 'text/csv; charset=utf-8');
      res.setHeader('Content-Disposition', 'attachment; filename="statement.csv"');
      res.setHeader('Cache-Control', 'no-store');
      res.write(csvHeader());
      for await (const entry of entries) {
        const view = statementEntryView(entry, currency);
        if (!res.write(csvRow(view))) await new Promise((resolve) => res.once('drain', resolve));
      }
      res.end();
    },
    getMyEarnings: async ({ query }, { user }) => {
      const earnings = await statements.earnings(user, query);
      return {
        data: {
          currency: earnings.currency,
          from: earnings.from.toISOString(),
          to: earnings.to.toISOString(),
          totals: { ...earnings.totals, availableMinor: earnings.availableMinor },
          byConsultation: earnings.byConsultation,
          byMonth: earnings.byMonth,
        },
      };
    },
    listMyTopups: async ({ query }, { user }) => {
      const { items, pagination } = await statements.topUpHistory(user, query);
      return { data: items.map(topUpHistoryView), pagination };
    },
    listMyPayoutRequests: async ({ query }, { user }) => {
      const { items, pagination } = await statements.payoutHistory(user, query);
      return { data: items.map(payoutHistoryView), pagination };
    },
    listMyTransfers: async ({ query }, { user }) => {
      const { items, pagination } = await statements.transferHistory(user, query);
      return { data: items.map((transfer) => transferHistoryView(transfer, user.id)), pagination };
    },
  };
}
