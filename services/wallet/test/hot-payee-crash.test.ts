import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import {
  balancesOf,
  call,
  env,
  givenBalance,
  ledgerMatches,
  newUser,
  openWallet,
  tokenOf,
  Transfer,
  useWallet,
  Wallet,
  walletEnv,
} from './harness';

/**
 * Money is conserved when a wallet process dies mid-run under a hot payee: 32 payers pay one
 * seller through a wallet process of its own, which is SIGKILLed while their transfers are in
 * flight (some mid-op: taken into flight, decided in the ledger, not committed). This file's
 * wallet then recovers as the sweep does — ops in flight finished, transfers resumed — and every
 * santim is where a transfer's record says it is.
 */
const walletApp = useWallet();
const PAYERS = 32;
const EACH_MINOR = 10_000_00;
const AMOUNT_MINOR = 1_37;
const KILL_AFTER = 400;

jest.setTimeout(180_000);

function startVictim(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [join(__dirname, 'wallet-process.cjs')], {
    cwd: join(__dirname, '..'),
    env: { ...process.env, ...walletEnv(), TEST_DB_NAME: env.dbName },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the wallet process exited (${code}) before it listened`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('url ')) resolve({ child, url: line.slice(4) });
    });
  });
}

test('32 payers → 1 seller, the wallet process SIGKILLed mid-run: every transfer ends once, money conserved', async () => {
  const seller = newUser('seller');
  await openWallet(seller.id, seller.ref, 'MKT');
  const payers = Array.from({ length: PAYERS }, () => newUser());
  for (const payer of payers) await givenBalance(payer, EACH_MINOR);
  const { child, url } = await startVictim();
  const exited = new Promise((resolve) => child.once('exit', resolve));

  let answered = 0;
  let cut = 0;
  let killed = false;
  const pay = async (payer: (typeof payers)[number]) => {
    while (!killed) {
      try {
        const res = await call(url, 'POST', '/v1/wallet/transfers', {
          token: tokenOf(payer),
          body: { toUserId: seller.id, amount: AMOUNT_MINOR, currency: 'ETB' },
        });
        expect(res.status).toBe(200);
        answered += 1;
        if (answered === KILL_AFTER && !killed) {
          killed = child.kill('SIGKILL');
        }
      } catch (err) {
        if (!killed) throw err;
        cut += 1; // a request the kill cut off
      }
    }
  };
  await Promise.all(payers.map(pay));
  await exited;

  const walletIds = [seller, ...payers].map((user) => user.id);
  const inflightAtKill = (await Wallet.find({ userId: { $in: walletIds } }).lean()).reduce((n, w) => n + (w.inflight?.length ?? 0), 0);
  const unfinishedAtKill = await Transfer.countDocuments({ toUserId: seller.id, status: { $in: ['Pending', 'Debited'] } });

  // Recovery, as the sweep runs it (later: past every grace period).
  const later = new Date(Date.now() + 120_000);
  await walletApp().parts.ledger.sweep(later);
  await walletApp().parts.transfers.resume(later);
  await walletApp().parts.transfers.resume(later);

  const transfers = await Transfer.find({ toUserId: seller.id }).lean();
  const byStatus = transfers.reduce<Record<string, number>>((n, t) => ({ ...n, [t.status]: (n[t.status] ?? 0) + 1 }), {});
  process.stdout.write(
    `[hot-payee-crash] ${answered} answered before the kill, ${cut} cut off; at the kill: ${unfinishedAtKill} transfers unfinished, ` +
      `${inflightAtKill} ops in flight; after recovery: ${JSON.stringify(byStatus)}\n`,
  );
  expect(unfinishedAtKill + inflightAtKill).toBeGreaterThan(0); // the kill did cut transfers mid-flow
  expect(Object.keys(byStatus).sort()).toEqual(['Completed']); // funds never ran short: none Failed, none left

  const completedMinor = (userId?: string) =>
    transfers.filter((t) => t.status === 'Completed' && (!userId || t.fromUserId === userId)).length * AMOUNT_MINOR;
  expect(await balancesOf(seller)).toEqual({ available: completedMinor(), held: 0 });
  let total = (await balancesOf(seller)).available;
  for (const payer of payers) {
    const balances = await balancesOf(payer);
    expect(balances).toEqual({ available: EACH_MINOR - completedMinor(payer.id), held: 0 });
    total += balances.available + balances.held;
  }
  expect(total).toBe(PAYERS * EACH_MINOR);
  for (const user of [seller, ...payers]) expect(await ledgerMatches(user)).toBe(true);
  expect(await Wallet.countDocuments({ userId: { $in: walletIds }, 'inflight.0': { $exists: true } })).toBe(0);
});
