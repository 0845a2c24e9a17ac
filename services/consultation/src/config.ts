import { z } from 'zod';
import { parseConfig, serviceEnv } from '@mkt/kit/runtime';

export const ConsultationEnv = serviceEnv(8084).extend({
  /** The wallet, called directly (not through the gateway) to hold the total of a paid booking. */
  WALLET_URL: z
    .string()
    .url()
    .default('http://127.0.0.1:8081')
    .transform((url) => url.replace(/\/+$/, '')),
  /** The service credential the wallet expects on `/internal/*`. */
  INTERNAL_API_TOKEN: z.union([z.literal(''), z.string().min(32, 'at least 32 characters')]).default(''),
  /** How long a booking request waits for the wallet before answering PaymentPending. */
  WALLET_TIMEOUT_MS: z.coerce.number().int().min(100).max(30_000).default(3_000),
  /** How long a PaymentPending booking is retried before it is given up (never past its start). */
  PAYMENT_DEADLINE_MINUTES: z.coerce.number().int().min(1).max(1440).default(15),
  /**
   * How long before its slot a seller may start a session (completion makes its buyers eligible
   * to review). 15 in production; test systems that book days ahead may raise it.
   */
  SESSION_START_LEAD_MINUTES: z.coerce.number().int().min(0).max(43_200).default(15),
  /**
   * How long after its slot's end a session nobody moved is ended by the sweep: never started →
   * Expired with every booking refunded in full; never ended → Completed (its holds captured).
   * So every hold ends Captured or Released, never open for ever.
   */
  SESSION_EXPIRY_GRACE_MINUTES: z.coerce.number().int().min(1).max(10_080).default(60),
  /**
   * A no-show may be marked only once the slot is this far under way: the larger of
   * NO_SHOW_GRACE_MINUTES and NO_SHOW_GRACE_PERCENT % of the slot's duration (before: 422
   * `no_show_too_early`). A buyer who is a few minutes late has not failed to show.
   */
  NO_SHOW_GRACE_MINUTES: z.coerce.number().int().min(0).max(1440).default(10),
  NO_SHOW_GRACE_PERCENT: z.coerce.number().int().min(0).max(100).default(25),
  /**
   * How many consultations one seller may have: creating one more is 422 `limit_reached`. It
   * bounds what a seller's records cost the reads that go over all of them (the rule-set listing).
   */
  MAX_CONSULTATIONS_PER_SELLER: z.coerce.number().int().min(1).max(1_000_000).default(1000),
  /**
   * How often the booking sweep looks for given-up bookings that owe a give-back without `owed`
   * (given up by a process of a version before the flag, which the sweep's give-back read does not
   * see): at its first run in a process, then this often. Each look reads the given-up bookings
   * whose last give-back is not recorded, so it is kept rare.
   */
  OWED_CHECK_MINUTES: z.coerce.number().int().min(1).max(1440).default(10),
});
export type ConsultationConfig = z.infer<typeof ConsultationEnv>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<ConsultationConfig> {
  const config = parseConfig(ConsultationEnv, env);
  if (config.NODE_ENV === 'production' && !config.INTERNAL_API_TOKEN)
    throw new Error('Invalid configuration:\n  INTERNAL_API_TOKEN is required in production (paid bookings hold money in the wallet)');
  return config;
}
