import type { WalletOp } from '../src/domain/records';
import {
  balancesOf,
  disconnectDatabase,
  givenBalance,
  LedgerEntryModel,
  ledgerMatches,
  newUser,
  openWallet,
  startWallet,
  uniqueName,
  type WalletApp,
} from './harness';

/**
 * A process inserts a wallet's ledger entries one writer at a time, those that wait going
 * together in the next ordered insert (README "Database round trips"). Two processes on one
 * wallet at once: a batch of one meets places the other took (its insert stops at the first, the
 * rest go in the next), ops repeated by both (each decided once), and every entry ends in one
 * place of the chain without a gap, the wallet's balances the chain's last.
 */
describe('one wallet, two processes inserting its ledger at once', () => {
  let first: WalletApp;
  let second: WalletApp;

  beforeAll(async () => {
    first = await startWallet();
    second = await startWallet();
    for (const app of [first, second]) await app.outbox.stop();
  });
  afterAll(async () => {
    await second.close();
    await first.close();
    await disconnectDatabase();
  });

  const credit = (opId: string, amountMinor = 1): WalletOp => ({
    opId,
    type: 'transfer_credit',
    availableDeltaMinor: amountMinor,
    heldDeltaMinor: 0,
    reference: opId,
  });

  test('64 credits from each, 32 of them the same ops on both: each applied once, the chain without a gap', async () => {
    const seller = newUser('seller');
    const wallet = await openWallet(seller.id, seller.ref, 'MKT');
    const shared = Array.from({ length: 32 }, () => uniqueName('shared'));
    const own = (n: number) => Array.from({ length: n }, () => uniqueName('own'));
    const run = (app: WalletApp, opIds: string[]) => Promise.all(opIds.map((opId) => app.parts.steps.applyOp(wallet._id, credit(opId))));
    const [a, b] = await Promise.all([run(first, [...shared, ...own(32)]), run(second, [...own(32), ...shared])]);
    const outcomes = [...a, ...b].map((outcome) => outcome.kind);
    // Every op once: 32 + 32 own ops applied, each shared op applied by one process and a repeat on the other.
    expect(outcomes.filter((kind) => kind === 'applied')).toHaveLength(96);
    expect(outcomes.filter((kind) => kind === 'repeat')).toHaveLength(32);
    expect(await balancesOf(seller)).toEqual({ available: 96, held: 0 });
    expect(await LedgerEntryModel.countDocuments({ walletId: wallet._id })).toBe(96);
    expect(await ledgerMatches(seller)).toBe(true);
  });

  test('a debit and credits from both on a funded wallet: balances after each place are the chain’s', async () => {
    const buyer = newUser();
    await givenBalance(buyer, 1_000);
    const wallet = (await first.parts.walletRepository.find({ userId: buyer.id }))!;
    const ops = (prefix: string) =>
      Array.from({ length: 24 }, (_, i): WalletOp =>
        i % 3 === 0 ? { ...credit(uniqueName(prefix), -10), type: 'transfer_debit' } : credit(uniqueName(prefix), 5),
      );
    await Promise.all([
      ...ops('a').map((op) => first.parts.steps.applyOp(wallet._id, op)),
      ...ops('b').map((op) => second.parts.steps.applyOp(wallet._id, op)),
    ]);
    // 2 × (8 debits of 10, 16 credits of 5) = −160 + 160.
    expect(await balancesOf(buyer)).toEqual({ available: 1_000, held: 0 });
    expect(await ledgerMatches(buyer)).toBe(true);
  });
});
