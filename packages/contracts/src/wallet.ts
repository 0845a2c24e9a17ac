import { z } from 'zod';
import { PageQuery } from './pagination';
import { NON_BLANK } from './schema-meta';
import { RULE } from './rules';
import { Currency, PositiveDecimalString, PositiveMajorAmount, PositiveMinorAmount, withMinorNames } from './money';
import { referenceOf } from './references';
import { BookingHoldView } from './booking-holds';

/** `Chapa` is the hosted-checkout provider the interface writes as `Gateway`. */
export const PaymentMethod = z.enum(['Chapa', 'Bank_Transfer', 'Mobile_Money', 'Card']).meta({ id: 'PaymentMethod' });
export type PaymentMethod = z.infer<typeof PaymentMethod>;

export const TOPUP_STATUSES = ['Processing', 'Completed', 'Failed', 'Cancelled', 'Expired'] as const;
export const TopUpStatus = z.enum(TOPUP_STATUSES).meta({ id: 'TopUpState' });
export type TopUpStatus = z.infer<typeof TopUpStatus>;

export const PAYOUT_STATUSES = ['Pending', 'Approved', 'Processing', 'Completed', 'Rejected', 'Failed', 'Cancelled'] as const;
export const PayoutStatus = z.enum(PAYOUT_STATUSES).meta({ id: 'PayoutState' });
export type PayoutStatus = z.infer<typeof PayoutStatus>;

export const PAYOUT_ADMIN_MOVES = ['approve', 'reject', 'process', 'complete', 'fail'] as const;
export const PayoutAdminMove = z.enum(PAYOUT_ADMIN_MOVES);
export type PayoutAdminMove = z.infer<typeof PayoutAdminMove>;

export const UserRefParams = z.object({ userReferenceId: referenceOf('USR') }).strict();
export const TopUpRefParams = z.object({ walletReferenceId: referenceOf('TOP-UP') }).strict();
export const PayoutRefParams = z.object({ referenceId: referenceOf('PAY-REQ') }).strict();
export const PayoutMoveParams = PayoutRefParams.extend({ move: PayoutAdminMove }).strict();

const Notes = z.string().trim().max(500);
/** An http(s) address: the pattern is documented; a host the URL parser still refuses is a rule (422). */
const HttpUrl = z
  .string()
  .max(2048)
  .regex(/^[Hh][Tt][Tt][Pp][Ss]?:\/\/[^\s/?#]+([/?#]\S*)?$/, 'Expected an http(s) URL')
  .refine((value) => URL.canParse(value), { message: 'Not a valid URL', params: RULE });

export const CreateTopUpBody = z
  .object({
    amount: PositiveMajorAmount,
    paymentMethod: PaymentMethod,
    redirectUrl: HttpUrl,
    notes: Notes.optional(),
  })
  .strict()
  .transform(withMinorNames(['amount']))
  .meta({ id: 'CreateTopUpBody' });
export type CreateTopUpBody = z.infer<typeof CreateTopUpBody>;

export const CreatePayoutBody = z
  .object({
    amount: PositiveDecimalString,
    bankCode: z.string().trim().min(1).max(40).meta(NON_BLANK),
    accountNumber: z.string().trim().min(1).max(40).meta(NON_BLANK),
    accountName: z.string().trim().min(1).max(120).meta(NON_BLANK),
    reason: z.string().trim().min(1).max(500).meta(NON_BLANK),
  })
  .strict()
  .transform(withMinorNames(['amount']))
  .meta({ id: 'CreatePayoutBody' });
export type CreatePayoutBody = z.infer<typeof CreatePayoutBody>;

export const PayoutMoveBody = z.object({ adminNotes: Notes.optional() }).strict().meta({ id: 'PayoutMoveBody' });
export type PayoutMoveBody = z.infer<typeof PayoutMoveBody>;

export const CancelPayoutBody = z.object({ reason: Notes.optional() }).strict().meta({ id: 'CancelPayoutBody' });

export const CreateTransferBody = z
  .object({
    toUserId: z.string().uuid(),
    amount: PositiveMinorAmount,
    currency: Currency,
  })
  .strict()
  .meta({ id: 'CreateTransferBody' });
export type CreateTransferBody = z.infer<typeof CreateTransferBody>;

export const WalletSummary = z.object({ referenceId: z.string(), etbAvailableBalance: z.number() });

export const TopUpCreated = z.object({
  id: z.string(),
  referenceId: z.string(),
  amount: z.number(),
  status: TopUpStatus,
  paymentMethod: PaymentMethod,
  paymentUrl: z.string(),
  createdAt: z.string(),
  wallet: WalletSummary,
});
export type TopUpCreated = z.infer<typeof TopUpCreated>;

export const TopUpStatusView = z.object({
  referenceId: z.string(),
  amount: z.number(),
  status: TopUpStatus,
  paymentMethod: PaymentMethod,
  completedAt: z.string().nullable(),
});
export type TopUpStatusView = z.infer<typeof TopUpStatusView>;

export const PayoutCreated = z.object({
  id: z.string(),
  referenceId: z.string(),
  requestedAmount: z.string(),
  status: PayoutStatus,
  bankCode: z.string(),
  accountNumber: z.string(),
  accountName: z.string(),
  reason: z.string(),
  createdAt: z.string(),
});
export type PayoutCreated = z.infer<typeof PayoutCreated>;

/** One move of a payout: who made it, when, and with which notes (the audit trail). */
export const PayoutHistoryItem = z.object({
  action: z.string(),
  from: z.string().nullable(),
  to: z.string(),
  /** Who moved it; null in the owner's view of a move by someone else (an admin): `byRole` says who. */
  byUserId: z.string().nullable(),
  byRole: z.string(),
  at: z.string(),
  notes: z.string().nullable(),
});

export const PayoutStatusView = z.object({
  referenceId: z.string(),
  requestedAmount: z.string(),
  status: PayoutStatus,
  processedAt: z.string().nullable(),
  adminNotes: z.string().nullable(),
  history: z.array(PayoutHistoryItem),
});
export type PayoutStatusView = z.infer<typeof PayoutStatusView>;

export const Bank = z.object({
  id: z.string(),
  name: z.string(),
  code: z.string(),
  bank_code: z.string(),
  country: z.string(),
  swift_code: z.string(),
  account_length: z.number().int(),
  is_mobile_money: z.boolean(),
  is_active: z.boolean(),
  is_rtgs: z.boolean(),
  is_24hrs: z.boolean(),
  currency: z.string(),
});
export type Bank = z.infer<typeof Bank>;

const Window = z.object({ count: z.number().int(), limit: z.number().int(), remaining: z.number().int() });
export const RateLimitStats = z.object({ daily: Window, weekly: Window, monthly: Window });
export type RateLimitStats = z.infer<typeof RateLimitStats>;

export const WalletView = z.object({
  id: z.string(),
  referenceId: z.string(),
  userId: z.string(),
  currency: z.string(),
  etbAvailableBalance: z.number(),
  heldBalance: z.number(),
});
export type WalletView = z.infer<typeof WalletView>;

export const TransferStatus = z.enum(['Pending', 'Debited', 'Completed', 'Failed']).meta({ id: 'TransferStatus' });

export const TransferView = z.object({
  id: z.string(),
  fromUserId: z.string(),
  toUserId: z.string(),
  amount: z.number().int(),
  currency: z.string(),
  status: TransferStatus,
  createdAt: z.string(),
  completedAt: z.string().nullable(),
});
export type TransferView = z.infer<typeof TransferView>;

/** The sandbox checkout page posts its token as a form field. */
export const CheckoutForm = z
  .object({ token: z.string().min(1).max(200) })
  .strict()
  .meta({ id: 'CheckoutForm' });
export const CheckoutQuery = z.object({ token: z.string().min(1).max(200) });

/** The internal hold of a paid booking (consultation → wallet): booking-holds.ts. */
export * from './booking-holds';

/** An admin's void of a hold that never ends: why, for the hold's history (required, bounded). */
export const VoidBookingHoldBody = z
  .object({ reason: z.string().trim().min(1).max(500).meta(NON_BLANK) })
  .strict()
  .meta({ id: 'VoidBookingHoldBody' });
export type VoidBookingHoldBody = z.infer<typeof VoidBookingHoldBody>;
/** An admin's ruling for the seller on a disputed no-show: why. */
export const UpholdBookingHoldBody = z
  .object({ reason: z.string().trim().min(1).max(500).meta(NON_BLANK) })
  .strict()
  .meta({ id: 'UpholdBookingHoldBody' });
export type UpholdBookingHoldBody = z.infer<typeof UpholdBookingHoldBody>;

/** A hold as an admin sees it: where its money stands, when a capture may move it, who changed it by hand. */
export const BookingHoldAdminView = BookingHoldView.extend({
  buyerId: z.string(),
  sellerId: z.string(),
  /** The booked slot's end: no capture before it (null: a hold from before the wallet knew). */
  endsAt: z.string().nullable(),
  /** A decided capture waiting for the slot's end moves its money then (null: at once). */
  dueAt: z.string().nullable(),
  settledAt: z.string().nullable(),
  history: z.array(z.object({ action: z.literal('void'), by: z.string(), at: z.string(), reason: z.string() })),
  /** The buyer disputes the no-show: a capture waits for an admin (void, or uphold). */
  disputed: z.boolean(),
  dispute: z
    .object({
      reason: z.string(),
      at: z.string(),
      resolvedBy: z.string().nullable(),
      resolvedAt: z.string().nullable(),
      resolution: z.enum(['capture_upheld']).nullable(),
      resolutionReason: z.string().nullable(),
    })
    .nullable(),
});
export type BookingHoldAdminView = z.infer<typeof BookingHoldAdminView>;

// ── The caller's money: statement and histories ────────────────────────────────────────────

/** What a ledger entry records (one balance change of one wallet). */
export const LEDGER_ENTRY_TYPES = [
  'topup_credit',
  'transfer_debit',
  'transfer_credit',
  'booking_hold',
  'booking_settle',
  'booking_capture',
  'booking_fee',
  'payout_hold',
  'payout_release',
  'payout_settle',
] as const;
export const LedgerEntryType = z.enum(LEDGER_ENTRY_TYPES).meta({ id: 'LedgerEntryType' });
export type LedgerEntryType = z.infer<typeof LedgerEntryType>;

const StatementTime = z.string().datetime({ offset: true });
/** `type` as a comma-separated list of entry types (`booking_hold,booking_settle`). */
const EntryTypes = z
  .string()
  .max(400)
  .transform((value, ctx) => {
    const types = [...new Set(value.split(',').map((type) => type.trim()))];
    for (const type of types)
      if (!LedgerEntryType.safeParse(type).success) {
        ctx.addIssue({ code: 'custom', message: `Unknown entry type: ${type.slice(0, 40)}` });
        return z.NEVER;
      }
    return types as LedgerEntryType[];
  })
  .meta({ description: `Comma-separated entry types: ${LEDGER_ENTRY_TYPES.join(', ')}` });

/** The statement's filters: entry types, `postedAt` range (inclusive), newest first. */
const StatementFilters = z.object({
  type: EntryTypes.optional(),
  from: StatementTime.optional(),
  to: StatementTime.optional(),
});

/**
 * `GET /v1/wallet/transactions`: a page of the caller's statement, newest first. `cursor` is the
 * previous page's `nextCursor` (opaque); pages stay put while new entries arrive.
 */
export const StatementQuery = StatementFilters.extend({
  cursor: z
    .string()
    .regex(/^-?\d{1,15}$/, 'Expected a cursor from a previous page')
    .optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
})
  .strict()
  .refine((query) => !query.from || !query.to || Date.parse(query.from) <= Date.parse(query.to), {
    message: '`from` must not be after `to`',
    path: ['from'],
  });
export type StatementQuery = z.infer<typeof StatementQuery>;

/** `GET /v1/wallet/transactions.csv`: every entry the filters match, newest first, as CSV. */
export const StatementExportQuery = StatementFilters.strict().refine(
  (query) => !query.from || !query.to || Date.parse(query.from) <= Date.parse(query.to),
  { message: '`from` must not be after `to`', path: ['from'] },
);
export type StatementExportQuery = z.infer<typeof StatementExportQuery>;

export const TopUpHistoryQuery = PageQuery.extend({ status: TopUpStatus.optional() }).strict();
export type TopUpHistoryQuery = z.infer<typeof TopUpHistoryQuery>;
export const PayoutHistoryQuery = PageQuery.extend({ status: PayoutStatus.optional() }).strict();
export type PayoutHistoryQuery = z.infer<typeof PayoutHistoryQuery>;
/** Which side of a transfer the caller was on. */
export const TransferDirection = z.enum(['sent', 'received']).meta({ id: 'TransferDirection' });
export const TransferDirectionFilter = z.enum(['sent', 'received', 'all']).meta({ id: 'TransferDirectionFilter' });
export const TransferHistoryQuery = PageQuery.extend({
  status: TransferStatus.optional(),
  /** `sent`, `received`, or both (default). */
  direction: TransferDirectionFilter.default('all'),
}).strict();
export type TransferHistoryQuery = z.infer<typeof TransferHistoryQuery>;

/** `GET /v1/wallet/earnings`: a seller's money, over [from, to] (default: the last 12 calendar months, UTC). */
export const EarningsQuery = z
  .object({ from: StatementTime.optional(), to: StatementTime.optional() })
  .strict()
  .refine((query) => !query.from || !query.to || Date.parse(query.from) <= Date.parse(query.to), {
    message: '`from` must not be after `to`',
    path: ['from'],
  });
export type EarningsQuery = z.infer<typeof EarningsQuery>;
