import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { Migrator } from '@mkt/kit/db';
import { walletMigrations } from '../src/migrations';
import { newReference } from '@mkt/contracts';
import type { WalletOp } from '../src/domain/records';
import { boundedOp, inflightOf, ledgerEntryOf } from '../src/domain/wallet-ops';
import {
  applyWalletOp,
  balancesOf,
  finishOpsInFlight,
  givenBalance,
  LedgerEntryModel,
  ledgerMatches,
  newUser,
  openWallet,
  uniqueName,
  useWallet,
  Wallet,
} from './harness';

/**
 * The exactly-once protocol (README "Exactly once"): an op is taken into flight on the wallet,
 * decided by its ledger entry's unique insert, then committed or rolled back. Each test stops a
 * run at one of its crash points, or races runs of the same op, against the real database.
 */
const walletApp = useWallet();
const parts = () => walletApp().parts;
const future = () => new Date(Date.now() + 60_000);

const credit = (amountMinor: number, opId = uniqueName('op')): WalletOp => ({
  opId,
  type: 'transfer_credit',
  availableDeltaMinor: amountMinor,
  heldDeltaMinor: 0,
  reference: opId,
});
const debit = (amountMinor: number, opId = uniqueName('op')): WalletOp => ({ ...credit(-amountMinor, opId), type: 'transfer_debit' });
const hold = (amountMinor: number, opId = uniqueName('op')): WalletOp => ({
  ...credit(0, opId),
  type: 'booking_hold',
  availableDeltaMinor: -amountMinor,
  heldDeltaMinor: amountMinor,
});

async function funded(minor: number) {
  const user = newUser();
  await givenBalance(user, minor);
  const wallet = await openWallet(user.id, user.ref, 'MKT');
  return { user, walletId: wallet._id };
}

/** A run of `op` that took it into flight, then died (its token with it). */
async function diedAfterEscrow(walletId: string, op: WalletOp) {
  const bounded = boundedOp(op);
  const inflight = inflightOf(ledgerEntryOf(walletId, bounded, new Date()), randomUUID());
  expect(await parts().walletRepository.escrow(walletId, bounded, inflight)).toBe(true);
  return inflight;
}

const walletDoc = (walletId: string) => Wallet.collection.findOne({ _id: walletId } as object);

describe('a run that died at each point of an op', () => {
  test('after taking the op into flight: a hold’s amount has left available, not reached held; the repeat finishes it once', async () => {
    const { user, walletId } = await funded(100_00);
    const op = hold(40_00);
    await diedAfterEscrow(walletId, op);
    expect(await balancesOf(user)).toEqual({ available: 60_00, held: 0 });
    expect(await applyWalletOp(walletId, op)).toEqual({ kind: 'repeat' }); // finished by the dead run's token
    expect(await applyWalletOp(walletId, op)).toEqual({ kind: 'repeat' });
    expect(await balancesOf(user)).toEqual({ available: 60_00, held: 40_00 });
    expect(await LedgerEntryModel.countDocuments({ _id: op.opId })).toBe(1);
    expect(await ledgerMatches(user)).toBe(true);
  });

  test('after taking the op into flight: the step run again finds it in flight and finishes it; the sweep then has nothing', async () => {
    const { user, walletId } = await funded(100_00);
    const op = debit(30_00);
    await diedAfterEscrow(walletId, op);
    expect(await applyWalletOp(walletId, op)).toEqual({ kind: 'repeat' });
    await finishOpsInFlight(future());
    expect(await balancesOf(user)).toEqual({ available: 70_00, held: 0 });
    expect(await walletDoc(walletId)).toMatchObject({ inflight: [], inflightInMinor: 0, inflightOutMinor: 0 });
    expect(await ledgerMatches(user)).toBe(true);
  });

  test('after taking the op into flight: the sweep finishes it (older than its cutoff only), then the repeat changes nothing', async () => {
    const { user, walletId } = await funded(100_00);
    const op = credit(25_00);
    await diedAfterEscrow(walletId, op);
    await finishOpsInFlight(new Date(Date.now() - 60_000)); // too young: a live run may still finish it
    expect((await walletDoc(walletId))!.inflight).toHaveLength(1);
    await finishOpsInFlight(future());
    expect(await balancesOf(user)).toEqual({ available: 125_00, held: 0 });
    expect(await applyWalletOp(walletId, op)).toEqual({ kind: 'repeat' });
    expect(await balancesOf(user)).toEqual({ available: 125_00, held: 0 });
    expect(await ledgerMatches(user)).toBe(true);
  });

  test('after the ledger decided it, before the commit: the credit is not spendable yet; finished once, never twice', async () => {
    const { user, walletId } = await funded(0);
    const op = credit(50_00);
    const inflight = await diedAfterEscrow(walletId, op);
    expect(await parts().ledger.decide(inflight)).toBe(true);
    expect(await balancesOf(user)).toEqual({ available: 0, held: 0 });
    // Nothing can spend the decided credit before its commit...
    expect(await applyWalletOp(walletId, debit(1))).toEqual({ kind: 'insufficient_funds' });
    // ...and every finisher agrees on it: the sweep, the repeat, the dead run's token asked again.
    await Promise.all([finishOpsInFlight(future()), applyWalletOp(walletId, op), parts().ledger.finish(walletId, inflight)]);
    expect(await parts().ledger.decide(inflight)).toBe(true);
    expect(await balancesOf(user)).toEqual({ available: 50_00, held: 0 });
    expect(await ledgerMatches(user)).toBe(true);
  });

  test('a run that arrives after the op was applied and finished (a stale read): what it took goes back', async () => {
    const { user, walletId } = await funded(100_00);
    const op = debit(30_00);
    expect(await applyWalletOp(walletId, op)).toEqual({ kind: 'applied' });
    const stale = await diedAfterEscrow(walletId, op); // the same debit taken into flight again...
    expect(await balancesOf(user)).toEqual({ available: 40_00, held: 0 });
    expect(await parts().ledger.finish(walletId, stale)).toBe(false); // ...the ledger says applied before: rolled back
    expect(await balancesOf(user)).toEqual({ available: 70_00, held: 0 });
    expect(await LedgerEntryModel.countDocuments({ _id: op.opId })).toBe(1);
    expect(await ledgerMatches(user)).toBe(true);
  });
});

describe('runs of the same op at once', () => {
  test('40 runs of one credit and one debit, beside sweeps: each applied exactly once', async () => {
    const { user, walletId } = await funded(100_00);
    const [up, down] = [credit(7_00), debit(9_00)];
    const runs = Array.from({ length: 40 }, (_, i) => applyWalletOp(walletId, i % 2 ? up : down));
    const sweeps = Array.from({ length: 4 }, () => finishOpsInFlight(future()));
    const outcomes = await Promise.all(runs);
    await Promise.all(sweeps);
    expect(outcomes.filter((o) => o.kind === 'applied')).toHaveLength(2);
    expect(outcomes.filter((o) => o.kind === 'repeat')).toHaveLength(38);
    expect(await balancesOf(user)).toEqual({ available: 98_00, held: 0 });
    expect(await walletDoc(walletId)).toMatchObject({ inflight: [], inflightInMinor: 0, inflightOutMinor: 0 });
    expect(await ledgerMatches(user)).toBe(true);
  });

  test('many distinct debits racing on one wallet never overdraw it', async () => {
    const { user, walletId } = await funded(100_00);
    const outcomes = await Promise.all(Array.from({ length: 30 }, () => applyWalletOp(walletId, debit(7_00))));
    expect(outcomes.filter((o) => o.kind === 'applied')).toHaveLength(14);
    expect(outcomes.filter((o) => o.kind === 'insufficient_funds')).toHaveLength(16);
    expect(await balancesOf(user)).toEqual({ available: 2_00, held: 0 });
    expect(await ledgerMatches(user)).toBe(true);
  });
});

describe('wallets of the previous release (op ids in appliedOps, entries in pendingEntries)', () => {
  /** A wallet as the previous release left it: op A moved to the ledger, op B still pending on the wallet. */
  async function legacyWallet() {
    const userId = randomUUID();
    const walletId = randomUUID();
    const at = new Date();
    const entry = (id: string, minor: number) => ({
      id,
      walletId,
      type: 'topup_credit',
      availableDeltaMinor: minor,
      heldDeltaMinor: 0,
      reference: id,
      createdAt: at.toISOString(),
    });
    const [a, b] = [entry(uniqueName('a'), 30_00), entry(uniqueName('b'), 20_00)];
    await LedgerEntryModel.collection.insertOne({ ...a, _id: a.id, createdAt: at } as never);
    await Wallet.collection.insertOne({
      _id: walletId,
      referenceId: newReference('USR-WAL', 'MKT'),
      userId,
      userRef: newReference('USR', 'MKT'),
      currency: 'ETB',
      availableMinor: 50_00,
      heldMinor: 0,
      appliedOps: [a.id, b.id],
      doneOps: [{ id: a.id, at }],
      pendingEntries: [b],
      createdAt: at,
      updatedAt: at,
    } as never);
    return { walletId, userId, a, b };
  }

  test('its ops are honoured (never applied again), a new op applies, and its arrays are gone', async () => {
    const { walletId, userId, a, b } = await legacyWallet();
    expect(await applyWalletOp(walletId, credit(30_00, a.id))).toEqual({ kind: 'repeat' });
    expect(await applyWalletOp(walletId, credit(20_00, b.id))).toEqual({ kind: 'repeat' });
    expect(await applyWalletOp(walletId, debit(45_00))).toEqual({ kind: 'applied' });
    const wallet = await walletDoc(walletId);
    expect(wallet).toMatchObject({ appliedOps: false, inflight: [], availableMinor: 5_00 });
    expect(wallet).not.toHaveProperty('doneOps');
    expect(wallet).not.toHaveProperty('pendingEntries');
    expect(await ledgerMatches({ id: userId } as never)).toBe(true);
  });

  test('they are migrated idempotently, and a migration cut off after its first write is finished by the next', async () => {
    const first = await legacyWallet();
    const second = await legacyWallet();
    await parts().walletRepository.fenceLegacy(second.walletId); // ...and the process dies here
    // Fenced: no op applies until its pending entries are in the ledger (it is migrated first).
    expect(await walletDoc(second.walletId)).toMatchObject({ appliedOps: false, pendingEntries: [second.b] });
    while ((await parts().ledger.migrateLegacy()) > 0);
    await parts().ledger.migrateLegacy();
    for (const { walletId, userId, b } of [first, second]) {
      const wallet = await walletDoc(walletId);
      expect(wallet).toMatchObject({ appliedOps: false, inflight: [], inflightInMinor: 0, availableMinor: 50_00 });
      expect(wallet).not.toHaveProperty('pendingEntries');
      expect(await LedgerEntryModel.countDocuments({ _id: b.id })).toBe(1);
      expect(await applyWalletOp(walletId, credit(20_00, b.id))).toEqual({ kind: 'repeat' });
      expect(await ledgerMatches({ id: userId } as never)).toBe(true);
    }
  });

  test('migration 0002-wallet-ops-ledger moves every one of them (more than a batch), once, before any op reaches them', async () => {
    const legacy = await Promise.all(Array.from({ length: 3 }, () => legacyWallet()));
    await parts().walletRepository.fenceLegacy(legacy[0]!.walletId); // a run cut off after its first write
    const db = Wallet.db;
    await db.collection('migrations').deleteOne({ _id: '0002-wallet-ops-ledger' } as never);
    const migrator = new Migrator({
      context: { db, log: pino({ level: 'silent' }), models: [], outboxSources: [] },
      // The first four: undoing from the last, below, then reaches 0004 first (0005 would drop its indexes).
      migrations: walletMigrations(parts().ledger, parts().models).slice(0, 4),
    });
    expect(await migrator.up()).toEqual(['0002-wallet-ops-ledger']);
    expect(await parts().walletRepository.legacyIds()).toEqual([]);
    for (const { walletId, userId, b } of legacy) {
      const wallet = await walletDoc(walletId);
      expect(wallet).toMatchObject({ appliedOps: false, inflight: [], availableMinor: 50_00 });
      expect(wallet).not.toHaveProperty('pendingEntries');
      expect(wallet).not.toHaveProperty('doneOps');
      expect(await LedgerEntryModel.countDocuments({ _id: b.id })).toBe(1);
      expect(await ledgerMatches({ id: userId } as never)).toBe(true);
    }
    // Undone from the last applied: 0004 only forgets it ran; the next, 0003 (indexes), is refused.
    await expect(migrator.down({ steps: 2 })).rejects.toThrow('cannot be undone');
  });

  test('a process of the previous release cannot apply an op to a wallet of this protocol (its write fails whole)', async () => {
    const { user, walletId } = await funded(100_00);
    // The previous release's guarded write, verbatim in shape: op id not in appliedOps, pushed with its entry.
    const previous = Wallet.collection.findOneAndUpdate(
      { _id: walletId, appliedOps: { $ne: 'old-op' }, availableMinor: { $gte: 10_00 } } as object,
      { $inc: { availableMinor: -10_00, heldMinor: 0 }, $push: { appliedOps: 'old-op', pendingEntries: { id: 'old-op' } } } as object,
    );
    await expect(previous).rejects.toThrow();
    expect(await balancesOf(user)).toEqual({ available: 100_00, held: 0 });
    expect(await walletDoc(walletId)).toMatchObject({ appliedOps: false });
  });
});
