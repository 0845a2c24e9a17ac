import { z } from 'zod';
import { PageQuery } from './pagination';
import { BookingHoldStatus, HoldSettlement, PayoutStatus } from './wallet';
import { Count, NullableTimestamp, PrefixedRef, Text, Timestamp, UserId } from './responses/common';

/** The wallet's admin queues: payouts waiting for an admin's move and booking holds overdue or disputed. */

/** The payout states that wait for an admin's next move. */
export const PAYOUT_QUEUE_STATUSES = ['Pending', 'Approved', 'Processing'] as const;

export const PayoutQueueState = z.enum(PAYOUT_QUEUE_STATUSES).meta({ id: 'PayoutQueueState' });

export const PayoutQueueQuery = PageQuery.extend({
  status: PayoutQueueState.optional(),
  userId: z.uuid().optional(),
}).strict();
export type PayoutQueueQuery = z.infer<typeof PayoutQueueQuery>;

const DecimalAmount = z
  .string()
  .regex(/^\d+\.\d{2}$/)
  .meta({ examples: ['150.00'] });

export const PayoutQueueResponse = z
  .strictObject({
    /** How many wait in each state (the filters other than `status` applied). */
    counts: z.strictObject({ Pending: Count(3), Approved: Count(1), Processing: Count(0) }),
    items: z.array(
      z.strictObject({
        referenceId: PrefixedRef('PAY-REQ'),
        userId: UserId,
        requestedAmount: DecimalAmount,
        currency: Text('ETB'),
        status: PayoutStatus,
        bankCode: Text('CBE'),
        accountName: Text('Sara Tesfaye'),
        reason: Text('Monthly withdrawal'),
        /** Who asked for it (the wallet's owner). */
        requestedBy: UserId.nullable(),
        /** The admins' moves so far: who already reviewed it. */
        reviewedBy: z.array(z.strictObject({ userId: UserId, action: Text('approve'), at: Timestamp })),
        /** The moves the state allows next. */
        nextMoves: z.array(Text('process')),
        /** Whether the calling admin may take the next step (four eyes: never on a payout of their own). */
        mayAct: z.boolean(),
        /** Why not, when `mayAct` is false. */
        blockedBecause: Text('Another admin must move a payout you requested').nullable(),
        createdAt: Timestamp,
      }),
    ),
  })
  .meta({ id: 'PayoutQueue' });

/** `overdue`: open past its slot's end plus the grace; `disputed`: a no-show the buyer disputes. */
export const HoldQueueKind = z.enum(['overdue', 'disputed']).meta({ id: 'HoldQueueKind' });

export const HoldQueueQuery = PageQuery.extend({
  kind: HoldQueueKind.optional(),
}).strict();
export type HoldQueueQuery = z.infer<typeof HoldQueueQuery>;

export const HoldQueueResponse = z
  .strictObject({
    counts: z.strictObject({ overdue: Count(1), disputed: Count(2) }),
    items: z.array(
      z.strictObject({
        bookingId: Text('bk_k2j4h6g8f0d2s4a6'),
        status: BookingHoldStatus,
        settlement: HoldSettlement.nullable(),
        amountMinor: Count(120000),
        currency: Text('ETB'),
        buyerId: UserId,
        sellerId: UserId,
        endsAt: NullableTimestamp,
        dueAt: NullableTimestamp,
        overdue: z.boolean(),
        disputed: z.boolean(),
        disputeReason: Text('I joined on time; nobody was there').nullable(),
        disputedAt: NullableTimestamp,
        createdAt: Timestamp,
      }),
    ),
  })
  .meta({ id: 'HoldQueue' });

// ---------------------------------------------------------------------------------------------
// Making an entry
