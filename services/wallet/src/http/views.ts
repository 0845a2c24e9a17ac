import {
  formatMinor,
  minorToMajor,
  type BookingHoldAdminResponse,
  type BookingHoldView,
  type HoldQueueResponse,
  type PayoutCreatedResponse,
  type PayoutHistoryItemResponse,
  type PayoutQueueResponse,
  type PayoutStatusResponse,
  type StatementEntryResponse,
  type TopUpCreatedResponse,
  type TopUpHistoryItemResponse,
  type TopUpReceiptResponse,
  type TopUpStatusResponse,
  type TransferHistoryItemResponse,
  type TransferResponse,
  type WalletResponse,
} from '@mkt/contracts/wallet';
import type { AuthenticatedUser, ReceiptDocument } from '@mkt/kit/http';
import type { z } from 'zod';
import type { TopUpCreatedResult } from '../application/topups.use-cases';
import { fourEyesBlock, isOverdueHold, nextMovesOf } from '../domain/admin-audit';
import type { ReceiptableTopUp } from '../domain/receipts';
import type {
  BookingHoldDoc,
  LedgerEntryDoc,
  PayoutDoc,
  PayoutHistoryEntry,
  TopUpDoc,
  TransferDoc,
  WalletSummary,
} from '../domain/records';

/**
 * The wallet's answers: its records as the API shows them (major units where the interface says
 * so), each typed by its response schema: a field the document does not describe, or one it
 * misses, does not compile.
 */
type View<S extends z.ZodType> = z.input<S>;

const iso = (date: Date | null | undefined) => date?.toISOString() ?? null;

/** `GET /v1/wallet`: the caller's wallet, in major units. */
export function walletView(wallet: WalletSummary): View<typeof WalletResponse> {
  return {
    id: wallet._id,
    referenceId: wallet.referenceId,
    userId: wallet.userId,
    currency: wallet.currency,
    etbAvailableBalance: minorToMajor(wallet.availableMinor),
    heldBalance: minorToMajor(wallet.heldMinor),
  };
}

export function topUpCreatedView({ topUp, wallet }: TopUpCreatedResult): View<typeof TopUpCreatedResponse> {
  return {
    id: topUp._id,
    referenceId: topUp.referenceId,
    amount: minorToMajor(topUp.amountMinor),
    status: topUp.status,
    paymentMethod: topUp.paymentMethod,
    paymentUrl: topUp.paymentUrl,
    createdAt: topUp.createdAt.toISOString(),
    wallet: { referenceId: wallet.referenceId, etbAvailableBalance: minorToMajor(wallet.availableMinor) },
  };
}

export function topUpStatusView(topUp: TopUpDoc): View<typeof TopUpStatusResponse> {
  return {
    referenceId: topUp.referenceId,
    amount: minorToMajor(topUp.amountMinor),
    status: topUp.status,
    paymentMethod: topUp.paymentMethod,
    completedAt: iso(topUp.completedAt),
  };
}

export function payoutCreatedView(payout: PayoutDoc): View<typeof PayoutCreatedResponse> {
  return {
    id: payout._id,
    referenceId: payout.referenceId,
    requestedAmount: formatMinor(payout.amountMinor),
    status: payout.status,
    bankCode: payout.bankCode,
    accountNumber: payout.accountNumber,
    accountName: payout.accountName,
    reason: payout.reason,
    createdAt: payout.createdAt.toISOString(),
  };
}

/**
 * A line of the trail as `viewer` may see it: an admin sees who made every move; the owner
 * sees the role of whoever moved their payout but not another user's id (an admin's id is not
 * theirs to know).
 */
function historyView(viewer: AuthenticatedUser, entry: PayoutHistoryEntry): View<typeof PayoutStatusResponse>['history'][number] {
  const byUserId = viewer.role === 'admin' || entry.byUserId === viewer.id ? entry.byUserId : null;
  return { ...entry, byUserId, at: entry.at.toISOString() };
}

export function payoutStatusView(viewer: AuthenticatedUser, payout: PayoutDoc): View<typeof PayoutStatusResponse> {
  return {
    referenceId: payout.referenceId,
    requestedAmount: formatMinor(payout.amountMinor),
    status: payout.status,
    processedAt: iso(payout.processedAt),
    adminNotes: payout.adminNotes,
    history: (payout.history ?? []).map((entry) => historyView(viewer, entry)),
  };
}

export function transferView(transfer: TransferDoc): View<typeof TransferResponse> {
  return {
    id: transfer._id,
    fromUserId: transfer.fromUserId,
    toUserId: transfer.toUserId,
    amount: transfer.amountMinor,
    currency: transfer.currency,
    status: transfer.status,
    createdAt: transfer.createdAt.toISOString(),
    completedAt: iso(transfer.completedAt),
  };
}

/** A hold as the consultation reads it (the admin's view adds to it). */
export function holdView(record: BookingHoldDoc): BookingHoldView {
  return {
    bookingId: record._id,
    status: record.status,
    settlement: record.settlement?.kind ?? null,
    amountMinor: record.amountMinor,
    currency: record.currency,
  };
}

export function holdAdminView(record: BookingHoldDoc): View<typeof BookingHoldAdminResponse> {
  return {
    ...holdView(record),
    buyerId: record.buyerId,
    sellerId: record.sellerId,
    endsAt: iso(record.endsAt),
    dueAt: iso(record.dueAt),
    settledAt: iso(record.settledAt),
    history: (record.history ?? []).map((entry) => ({ ...entry, at: entry.at.toISOString() })),
    disputed: record.disputed === true,
    dispute: record.dispute
      ? {
          reason: record.dispute.reason,
          at: record.dispute.at.toISOString(),
          resolvedBy: record.dispute.resolvedBy ?? null,
          resolvedAt: iso(record.dispute.resolvedAt ?? null),
          resolution: record.dispute.resolution ?? null,
          resolutionReason: record.dispute.resolutionReason ?? null,
        }
      : null,
  };
}

/** A payout in the admins' queue, as the calling admin sees it: who asked, who reviewed, whether they may move it next. */
export function payoutQueueItem(viewer: AuthenticatedUser, payout: PayoutDoc): View<typeof PayoutQueueResponse>['items'][number] {
  const blockedBecause = fourEyesBlock(viewer, payout);
  const nextMoves = nextMovesOf(payout.status);
  return {
    referenceId: payout.referenceId,
    userId: payout.userId,
    requestedAmount: formatMinor(payout.amountMinor),
    currency: payout.currency,
    status: payout.status,
    bankCode: payout.bankCode,
    accountName: payout.accountName,
    reason: payout.reason,
    requestedBy: payout.requestedBy,
    reviewedBy: (payout.history ?? [])
      .filter((entry) => entry.byRole === 'admin')
      .map((entry) => ({ userId: entry.byUserId, action: entry.action, at: entry.at.toISOString() })),
    nextMoves,
    mayAct: blockedBecause === null && nextMoves.length > 0,
    blockedBecause,
    createdAt: payout.createdAt.toISOString(),
  };
}

/** A hold in the admins' queue. */
export function holdQueueItem(record: BookingHoldDoc, now: Date): View<typeof HoldQueueResponse>['items'][number] {
  return {
    ...holdView(record),
    buyerId: record.buyerId,
    sellerId: record.sellerId,
    endsAt: iso(record.endsAt),
    dueAt: iso(record.dueAt),
    overdue: isOverdueHold(record, now),
    disputed: record.disputed === true,
    disputeReason: record.dispute?.reason ?? null,
    disputedAt: iso(record.dispute?.at ?? null),
    createdAt: record.createdAt.toISOString(),
  };
}

/** One entry of the caller's statement (minor units); balances after it null on an entry written before they were recorded. */
export function statementEntryView(entry: LedgerEntryDoc, currency: string): View<typeof StatementEntryResponse> {
  return {
    id: entry._id,
    type: entry.type,
    reference: entry.reference,
    availableDeltaMinor: entry.availableDeltaMinor,
    heldDeltaMinor: entry.heldDeltaMinor,
    currency,
    availableAfterMinor: entry.availableAfterMinor ?? null,
    heldAfterMinor: entry.heldAfterMinor ?? null,
    postedAt: (entry.postedAt ?? entry.createdAt).toISOString(),
  };
}

export function topUpHistoryView(topUp: TopUpDoc): View<typeof TopUpHistoryItemResponse> {
  return {
    referenceId: topUp.referenceId,
    amountMinor: topUp.amountMinor,
    currency: topUp.currency,
    status: topUp.status,
    paymentMethod: topUp.paymentMethod,
    createdAt: topUp.createdAt.toISOString(),
    completedAt: iso(topUp.completedAt),
  };
}

/** A completed top-up's receipt (`TopUpReceipt`). */
export function topUpReceiptView(topUp: ReceiptableTopUp, walletReferenceId: string): View<typeof TopUpReceiptResponse> {
  return {
    referenceId: topUp.referenceId,
    amountMinor: topUp.amountMinor,
    amount: minorToMajor(topUp.amountMinor),
    currency: topUp.currency,
    paymentMethod: topUp.paymentMethod,
    status: topUp.status,
    createdAt: topUp.createdAt.toISOString(),
    completedAt: topUp.completedAt.toISOString(),
    walletReferenceId,
    ownerId: topUp.userId,
  };
}

/** The same receipt as the printable page shows it (plain text values; the page escapes them). */
export function topUpReceiptDocument(view: ReturnType<typeof topUpReceiptView>, merchant: string): ReceiptDocument {
  return {
    title: `Top-up receipt ${view.referenceId}`,
    issuer: merchant,
    sections: [
      {
        heading: 'Payment',
        lines: [
          { label: 'Amount', value: `${formatMinor(view.amountMinor)} ${view.currency}`, strong: true },
          { label: 'Payment method', value: view.paymentMethod },
          { label: 'Status', value: view.status },
        ],
      },
      {
        heading: 'Details',
        lines: [
          { label: 'Reference', value: view.referenceId },
          { label: 'Wallet', value: view.walletReferenceId },
          { label: 'Owner', value: view.ownerId },
          { label: 'Created', value: view.createdAt },
          { label: 'Completed', value: view.completedAt },
        ],
      },
    ],
  };
}

/** A payout in its owner's history: the account number shown by its last four characters only. */
export function payoutHistoryView(payout: PayoutDoc): View<typeof PayoutHistoryItemResponse> {
  return {
    referenceId: payout.referenceId,
    amountMinor: payout.amountMinor,
    currency: payout.currency,
    status: payout.status,
    bankCode: payout.bankCode,
    accountNumberLast4: payout.accountNumber.slice(-4),
    createdAt: payout.createdAt.toISOString(),
    processedAt: iso(payout.processedAt),
  };
}

/** A transfer in the history of `userId`: sent by them, or received. */
export function transferHistoryView(transfer: TransferDoc, userId: string): View<typeof TransferHistoryItemResponse> {
  return {
    id: transfer._id,
    direction: transfer.fromUserId === userId ? ('sent' as const) : ('received' as const),
    fromUserId: transfer.fromUserId,
    toUserId: transfer.toUserId,
    amountMinor: transfer.amountMinor,
    currency: transfer.currency,
    status: transfer.status,
    createdAt: transfer.createdAt.toISOString(),
    completedAt: iso(transfer.completedAt),
  };
}
