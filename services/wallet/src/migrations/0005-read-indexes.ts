import { indexBuildMigration, type IndexSpec } from '@mkt/kit/db';

/**
 * The indexes of the sweeps' and the pages' reads added by this release (the models declare the
 * same; a database made by this release gets them from `0001-indexes`, one made before from this).
 * Written out here, not read from the models: what this migration builds never changes with them.
 */
const READ_INDEXES: IndexSpec[] = [
  // The ledger sweep's ops in flight since before its cutoff.
  { collection: 'wallets', key: { 'inflight.createdAt': 1 }, name: 'inflight.createdAt_1', sparse: true },
  // The resume sweep's Settling holds (oldest move first) and its ended holds of a window.
  { collection: 'booking_holds', key: { status: 1, updatedAt: 1 }, name: 'status_1_updatedAt_1' },
  // The admins' queues in their pages' order.
  { collection: 'booking_holds', key: { disputed: 1, createdAt: 1, _id: 1 }, name: 'disputed_1_createdAt_1__id_1' },
  { collection: 'payouts', key: { status: 1, hold: 1, createdAt: 1, _id: 1 }, name: 'status_1_hold_1_createdAt_1__id_1' },
  // The owners' histories in their pages' order.
  { collection: 'topups', key: { userId: 1, createdAt: -1, _id: -1 }, name: 'userId_1_createdAt_-1__id_-1' },
  { collection: 'payouts', key: { userId: 1, createdAt: -1, _id: -1 }, name: 'userId_1_createdAt_-1__id_-1' },
  { collection: 'transfers', key: { fromUserId: 1, createdAt: -1, _id: -1 }, name: 'fromUserId_1_createdAt_-1__id_-1' },
  { collection: 'transfers', key: { toUserId: 1, createdAt: -1, _id: -1 }, name: 'toUserId_1_createdAt_-1__id_-1' },
];

/**
 * Without these, the ledger sweep read every wallet every 5 s on every replica, the resume sweep
 * every Rejected and Voided hold ever written and sorted the Settling ones in memory, and each
 * page of a history or an admin queue fetched and sorted the whole list (its indexes lacked the
 * `_id` tie-break of the sort). Building an index that exists changes nothing: a run again after
 * a crash is safe. The indexes these extend stay (a process of the previous release may rely on
 * them during the rollout; services/wallet/README.md, "Indexes").
 *
 * Reversible: `down` drops what it built (the previous release neither reads nor names them);
 * this release's settling read hints `status_1_updatedAt_1`, so run `down` only with the
 * previous release's processes.
 */
export const readIndexes = indexBuildMigration('0005-read-indexes', READ_INDEXES);
