import type { Logger } from '@mkt/kit/logger';

/** One pass of the wallet's sweep: named, independent, each failure logged and the next one run. */
export interface SweepPass {
  name: string;
  run: () => Promise<void>;
}

/**
 * The sweeper (`SWEEP_INTERVAL_MS`): the ledger's housekeeping first (ops left in flight by a run
 * that died are finished; wallets of the previous release migrated), then the flows' resumes
 * (each through kit's step runner: top-up credits, booking settlements, payouts, transfers), then
 * expired limit counters and idempotency keys. The passes are not a flow — they own no record
 * and share no op id — so one failing never stops the others.
 */
export function walletSweep(passes: SweepPass[], log: Logger): () => Promise<void> {
  return async () => {
    for (const pass of passes) await pass.run().catch((err: unknown) => log.warn({ err, pass: pass.name }, 'wallet sweep step failed'));
  };
}
