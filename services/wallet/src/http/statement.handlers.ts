import {
  EarningsQuery,
  PayoutHistoryQuery,
  StatementExportQuery,
  StatementQuery,
  TopUpHistoryQuery,
  TransferHistoryQuery,
  ok,
} from '@mkt/contracts';
import { currentUser, handle, type MountOptions } from '@mkt/kit';
import type { Statements } from '../application/statements';
import { csvHeader, csvRow } from '../domain/statement-csv';
import { payoutHistoryView, statementEntryView, topUpHistoryView, transferHistoryView } from './views';

/**
 * The caller's money: `GET /v1/wallet/transactions` (statement pages), `GET
 * /v1/wallet/transactions.csv` (its export), the caller's earnings, and the top-up, payout and
 * transfer histories.
 */
export function statementHandlers(statements: Statements): MountOptions['handlers'] {
  return {
    'GET /v1/wallet/transactions': handle({ query: StatementQuery }, async (input, req, res) => {
      const page = await statements.page(currentUser(req), input.query);
      res.json(ok({ entries: page.entries.map((entry) => statementEntryView(entry, page.currency)), nextCursor: page.nextCursor }));
    }),
    'GET /v1/wallet/transactions.csv': handle({ query: StatementExportQuery }, async (input, req, res) => {
      const { currency, entries } = await statements.export(currentUser(req), input.query);
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
    }),
    'GET /v1/wallet/earnings': handle({ query: EarningsQuery }, async (input, req, res) => {
      const earnings = await statements.earnings(currentUser(req), input.query);
      res.json(
        ok({
          currency: earnings.currency,
          from: earnings.from.toISOString(),
          to: earnings.to.toISOString(),
          totals: { ...earnings.totals, availableMinor: earnings.availableMinor },
          byConsultation: earnings.byConsultation,
          byMonth: earnings.byMonth,
        }),
      );
    }),
    'GET /v1/wallet/topups': handle({ query: TopUpHistoryQuery }, async (input, req, res) => {
      const { items, pagination } = await statements.topUpHistory(currentUser(req), input.query);
      res.json(ok(items.map(topUpHistoryView), undefined, pagination));
    }),
    'GET /v1/wallet/payouts': handle({ query: PayoutHistoryQuery }, async (input, req, res) => {
      const { items, pagination } = await statements.payoutHistory(currentUser(req), input.query);
      res.json(ok(items.map(payoutHistoryView), undefined, pagination));
    }),
    'GET /v1/wallet/transfers': handle({ query: TransferHistoryQuery }, async (input, req, res) => {
      const user = currentUser(req);
      const { items, pagination } = await statements.transferHistory(user, input.query);
      res.json(
        ok(
          items.map((transfer) => transferHistoryView(transfer, user.id)),
          undefined,
          pagination,
        ),
      );
    }),
  };
}
