import { z } from 'zod';
import {
  BookingHoldStatus,
  HoldSettlement,
  LedgerEntryType,
  TransferDirection,
  PaymentMethod,
  PayoutStatus,
  TopUpStatus,
  TransferStatus,
} from '../wallet';
import { Count, CurrencyCode, Major, NullableTimestamp, PrefixedRef, Text, Timestamp, UserId, UserRole, Uuid } from './common';

const PaymentMethodValue = PaymentMethod;
const TopUpStatusValue = TopUpStatus;
const PayoutStatusValue = PayoutStatus;
/** A 2-decimal string of major units. */
const DecimalAmount = z
  .string()
  .regex(/^\d+\.\d{2}$/)
  .meta({ examples: ['150.00'] });

export const TopUpCreatedResponse = z
  .strictObject({
    id: Uuid,
    referenceId: PrefixedRef('TOP-UP'),
    amount: Major(300),
    status: TopUpStatusValue,
    paymentMethod: PaymentMethodValue,
    paymentUrl: z.url().meta({ examples: ['http://localhost:8080/wallets/checkout/MKT-TOP-UP-7Q2M9XKD?token=Vb0sQ1mZ4yX7wK2p'] }),
    createdAt: Timestamp,
    wallet: z.strictObject({ referenceId: PrefixedRef('USR-WAL'), etbAvailableBalance: Major(0) }),
  })
  .meta({ id: 'TopUpCreated' });

export const TopUpStatusResponse = z
  .strictObject({
    referenceId: PrefixedRef('TOP-UP'),
    amount: Major(300),
    status: TopUpStatusValue,
    paymentMethod: PaymentMethodValue,
    completedAt: NullableTimestamp,
  })
  .meta({ id: 'TopUpStatus' });

export const PayoutCreatedResponse = z
  .strictObject({
    id: Uuid,
    referenceId: PrefixedRef('PAY-REQ'),
    requestedAmount: DecimalAmount,
    status: PayoutStatusValue,
    bankCode: Text('CBE'),
    accountNumber: Text('1000123456789'),
    accountName: Text('Sara Tesfaye'),
    reason: Text('Monthly withdrawal'),
    createdAt: Timestamp,
  })
  .meta({ id: 'PayoutCreated' });

export const PayoutStatusResponse = z
  .strictObject({
    referenceId: PrefixedRef('PAY-REQ'),
    requestedAmount: DecimalAmount,
    status: PayoutStatusValue,
    processedAt: NullableTimestamp,
    adminNotes: Text('Account checked').nullable(),
    /** Every move: who made it, when, with which notes. */
    history: z.array(
      z.strictObject({
        action: Text('approve'),
        from: PayoutStatusValue.nullable(),
        to: PayoutStatusValue,
        /** Null in the owner's view of a move by someone else (an admin): `byRole` says who. */
        byUserId: UserId.nullable(),
        byRole: UserRole,
        at: Timestamp,
        notes: Text('Account checked').nullable(),
      }),
    ),
  })
  .meta({ id: 'PayoutStatus' });

const LimitWindow = z.strictObject({ count: Count(2), limit: Count(10), remaining: Count(8) });
export const RateLimitStatsResponse = z
  .strictObject({ daily: LimitWindow, weekly: LimitWindow, monthly: LimitWindow })
  .meta({ id: 'RateLimitStats' });

export const BankResponse = z
  .strictObject({
    id: Text('1'),
    name: Text('Commercial Bank of Ethiopia'),
    code: Text('CBE'),
    bank_code: Text('CBE'),
    country: Text('ET'),
    swift_code: Text('CBETETAA'),
    account_length: z
      .number()
      .int()
      .positive()
      .meta({ examples: [13] }),
    is_mobile_money: z.boolean(),
    is_active: z.boolean(),
    is_rtgs: z.boolean(),
    is_24hrs: z.boolean(),
    currency: CurrencyCode,
  })
  .meta({ id: 'Bank' });
export const BanksResponse = z.array(BankResponse).meta({ id: 'Banks' });

export const WebhookResponse = z.strictObject({ reference: PrefixedRef('TOP-UP') }).meta({ id: 'Webhook' });

export const WalletResponse = z
  .strictObject({
    id: Uuid,
    referenceId: PrefixedRef('USR-WAL'),
    userId: UserId,
    currency: CurrencyCode,
    etbAvailableBalance: Major(250),
    heldBalance: Major(750),
  })
  .meta({ id: 'Wallet' });

/** `/v1` amounts are integer minor units. */
export const TransferResponse = z
  .strictObject({
    id: Uuid,
    fromUserId: UserId,
    toUserId: UserId,
    amount: z
      .number()
      .int()
      .positive()
      .meta({ examples: [12000] }),
    currency: CurrencyCode,
    status: TransferStatus,
    createdAt: Timestamp,
    completedAt: NullableTimestamp,
  })
  .meta({ id: 'Transfer' });

/** A paid booking's hold (admins). Ids and currency are plain text: a void marker for a booking never held has them empty. */
export const BookingHoldAdminResponse = z
  .strictObject({
    bookingId: Text('bk_k2j4h6g8f0d2s4a6'),
    status: BookingHoldStatus,
    settlement: HoldSettlement.nullable(),
    amountMinor: Count(120000),
    currency: Text('ETB'),
    buyerId: Text('3f1c2a7e-8d4b-4c1e-9a2f-5b6c7d8e9f01'),
    sellerId: Text('9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d'),
    endsAt: NullableTimestamp,
    dueAt: NullableTimestamp,
    settledAt: NullableTimestamp,
    history: z.array(
      z.strictObject({
        action: z.literal('void'),
        by: UserId,
        at: Timestamp,
        reason: Text('The session never took place'),
      }),
    ),
    /** The buyer disputes the no-show: a capture waits for an admin (void, or uphold). */
    disputed: z.boolean(),
    dispute: z
      .strictObject({
        reason: Text('I joined on time; nobody was there'),
        at: Timestamp,
        resolvedBy: UserId.nullable(),
        resolvedAt: NullableTimestamp,
        resolution: z.enum(['capture_upheld']).nullable(),
        resolutionReason: Text('The seller waited the whole hour').nullable(),
      })
      .nullable(),
  })
  .meta({ id: 'BookingHoldAdmin' });

// ── The caller's money: statement and histories ────────────────────────────────────────────

const Minor = (example: number) =>
  z
    .number()
    .int()
    .meta({ examples: [example] });

/** One ledger entry of the caller's wallet: a balance change, its cause, and the balances after it. */
export const StatementEntryResponse = z
  .strictObject({
    /** The op id: unique, the same on every read. */
    id: Text('transfer:5b6c7d8e-9f01-4c1e-9a2f-3f1c2a7e8d4b:credit'),
    type: LedgerEntryType,
    /** What caused it: the top-up's or payout's reference, the transfer's id, or the booking's id. */
    reference: Text('MKT-TOP-UP-7Q2M9XKD'),
    /** Signed minor units: what the entry added to (or took from) available and held. */
    availableDeltaMinor: Minor(30000),
    heldDeltaMinor: Minor(0),
    currency: CurrencyCode,
    /**
     * The balances once this entry and every one before it applied, in minor units; null for an
     * entry written before balances after were recorded.
     */
    availableAfterMinor: Minor(30000).nullable(),
    heldAfterMinor: Minor(0).nullable(),
    /** When the entry was written (never before the one before it). */
    postedAt: Timestamp,
  })
  .meta({ id: 'StatementEntry' });

export const StatementResponse = z
  .strictObject({
    entries: z.array(StatementEntryResponse),
    /** Pass as `cursor` for the next (older) page; null on the last page. */
    nextCursor: Text('41').nullable(),
  })
  .meta({ id: 'Statement' });

export const TopUpHistoryItemResponse = z
  .strictObject({
    referenceId: PrefixedRef('TOP-UP'),
    amountMinor: Minor(30000),
    currency: CurrencyCode,
    status: TopUpStatusValue,
    paymentMethod: PaymentMethodValue,
    createdAt: Timestamp,
    completedAt: NullableTimestamp,
  })
  .meta({ id: 'TopUpHistoryItem' });
export const TopUpHistoryResponse = z.array(TopUpHistoryItemResponse).meta({ id: 'TopUpHistory' });

/** The receipt of a completed top-up: what was paid, how, when, and into whose wallet. */
export const TopUpReceiptResponse = z
  .strictObject({
    referenceId: PrefixedRef('TOP-UP'),
    amountMinor: Minor(30000),
    /** The amount in major units, as printed. */
    amount: Major(300),
    currency: CurrencyCode,
    paymentMethod: PaymentMethodValue,
    status: z.literal('Completed'),
    createdAt: Timestamp,
    completedAt: Timestamp,
    /** The wallet credited and its owner. */
    walletReferenceId: PrefixedRef('USR-WAL'),
    ownerId: UserId,
  })
  .meta({ id: 'TopUpReceipt' });

export const PayoutHistoryItemResponse = z
  .strictObject({
    referenceId: PrefixedRef('PAY-REQ'),
    amountMinor: Minor(15000),
    currency: CurrencyCode,
    status: PayoutStatusValue,
    bankCode: Text('CBE'),
    /** The account number's last four characters only. */
    accountNumberLast4: Text('6789'),
    createdAt: Timestamp,
    processedAt: NullableTimestamp,
  })
  .meta({ id: 'PayoutHistoryItem' });
export const PayoutHistoryResponse = z.array(PayoutHistoryItemResponse).meta({ id: 'PayoutHistory' });

export const TransferHistoryItemResponse = z
  .strictObject({
    id: Uuid,
    /** `sent` by the caller or `received`. */
    direction: TransferDirection,
    fromUserId: UserId,
    toUserId: UserId,
    amountMinor: Minor(12000),
    currency: CurrencyCode,
    status: TransferStatus,
    createdAt: Timestamp,
    completedAt: NullableTimestamp,
  })
  .meta({ id: 'TransferHistoryItem' });
export const TransferHistoryResponse = z.array(TransferHistoryItemResponse).meta({ id: 'TransferHistory' });

const EarningsFigures = {
  /** Held on buyers' wallets for this seller's sessions still ahead (not decided yet). */
  aheadMinor: Minor(40000),
  /** Decided for this seller (or past its slot, awaiting the session's end) but not credited yet. */
  settlingMinor: Minor(12000),
};

export const EarningsResponse = z
  .strictObject({
    currency: CurrencyCode,
    from: Timestamp,
    to: Timestamp,
    totals: z.strictObject({
      ...EarningsFigures,
      /** The seller's spendable balance now. */
      availableMinor: Minor(25000),
      /** Credited to the seller from bookings within [from, to] (after the platform's fee): the statement's `booking_capture` entries. */
      earnedMinor: Minor(52000),
      /** Paid out to the bank within [from, to]: the statement's `payout_settle` entries. */
      paidOutMinor: Minor(15000),
    }),
    byConsultation: z.array(
      z.strictObject({
        /** Null for holds made before the wallet was told their consultation. */
        consultationId: Text('con_k2j4h6g8f0d2s4a6').nullable(),
        ...EarningsFigures,
        earnedMinor: Minor(52000),
      }),
    ),
    byMonth: z.array(
      z.strictObject({
        month: z
          .string()
          .regex(/^\d{4}-\d{2}$/)
          .meta({ examples: ['2026-11'] }),
        earnedMinor: Minor(52000),
        paidOutMinor: Minor(15000),
      }),
    ),
  })
  .meta({ id: 'Earnings' });
