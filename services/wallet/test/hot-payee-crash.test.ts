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
const MAX_ROUNDS = 5;

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

/** One round: the victim serves the payers until `KILL_AFTER` answers and an op is seen in flight, then dies. */
async function payUntilKilled(
  seller: ReturnType<typeof newUser>,
  payers: ReturnType<typeof newUser>[],
): Promise<{ answered: number; cut: number; unfinished: number; inflight: number }> {
  const { child, url } = await startVictim();
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const walletIds = [seller, ...payers].map((user) => user.id);
  const unfinished = () => Transfer.countDocuments({ toUserId: seller.id, status: { $in: ['Pending', 'Debited'] } });
  const inflight = async () =>
    (await Wallet.find({ userId: { $in: walletIds } }).lean()).reduce((n, w) => n + (w.inflight?.length ?? 0), 0);

  let answered = 0;
  let cut = 0;
  let killed = false;
  // Kills once enough was answered and the database shows an op mid-flight (taken into flight on a
  // wallet, not yet finished): on a loaded machine the process can be between transfers at any
  // given answer, and a kill then would cut nothing.
  let failed = false;
  const killer = (async () => {
    try {
      while (answered < KILL_AFTER && !failed) await new Promise((resolve) => setTimeout(resolve, 5));
      while (!failed && (await inflight()) === 0) await new Promise((resolve) => setImmediate(resolve));
    } finally {
      killed = child.kill('SIGKILL'); // also when a poll failed: no victim outlives its round
    }
  })();
  const pay = async (payer: (typeof payers)[number]) => {
    while (!killed) {
      try {
        const res = await call(url, 'POST', '/v1/wallet/transfers', {
          token: tokenOf(payer),
          body: { toUserId: seller.id, amount: AMOUNT_MINOR, currency: 'ETB' },
        });
        answered += 1;
        expect(res.status).toBe(200);
      } catch (err) {
        if (!killed) {
          failed = true; // the killer ends the victim, so the test fails on this error instead of hanging
          throw err;
        }
        cut += 1; // a request the kill cut off
      }
    }
  };
  try {
    await Promise.all(payers.map(pay));
  } finally {
    failed ||= !killed;
    try {
      await killer;
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    }
  }
  return { answered, cut, unfinished: await unfinished(), inflight: await inflight() };
}

test('32 payers → 1 seller, the wallet process SIGKILLed mid-run: every transfer ends once, money conserved', async () => {
  const seller = newUser('seller');
  await openWallet(seller.id, seller.ref, 'MKT');
  const payers = Array.from({ length: PAYERS }, () => newUser());
  for (const payer of payers) await givenBalance(payer, EACH_MINOR);

  // An op seen in flight can still finish before the signal lands; then the victim is started again
  // (the transfers it finished stay counted), until a kill has cut one mid-op.
  const rounds: Awaited<ReturnType<typeof payUntilKilled>>[] = [];
  do rounds.push(await payUntilKilled(seller, payers));
  while (rounds.length < MAX_ROUNDS && rounds.at(-1)!.inflight === 0);
  const { unfinished: unfinishedAtKill, inflight: inflightAtKill } = rounds.at(-1)!;
  const answered = rounds.reduce((n, r) => n + r.answered, 0);
  const cut = rounds.reduce((n, r) => n + r.cut, 0);

  const walletIds = [seller, ...payers].map((user) => user.id);

  // Recovery, as the sweep runs it (later: past every grace period).
  const later = new Date(Date.now() + 120_000);
  await walletApp().parts.ledger.sweep(later);
  await walletApp().parts.transfers.resume(later);
  await walletApp().parts.transfers.resume(later);

  const transfers = await Transfer.find({ toUserId: seller.id }).lean();
  const byStatus = transfers.reduce<Record<string, number>>((n, t) => ({ ...n, [t.status]: (n[t.status] ?? 0) + 1 }), {});
  process.stdout.write(
    `[hot-payee-crash] ${rounds.length} round(s), ${answered} answered before the kills, ${cut} cut off; at the last kill: ${unfinishedAtKill} transfers unfinished, ` +
      `${inflightAtKill} ops in flight; after recovery: ${JSON.stringify(byStatus)}\n`,
  );
  expect(inflightAtKill).toBeGreaterThan(0); // the kill did cut ops mid-flight
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
