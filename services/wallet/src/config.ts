import { z } from 'zod';
import { decimalStringToMinor } from '@mkt/contracts/wallet';
import { parseConfig, serviceEnv } from '@mkt/kit/runtime';
import { HARD_CEILING_MINOR } from './domain/wallet-ops';

/** A major-unit amount from the environment ("1000000.00") → minor units within the hard ceiling. */
const MajorAmount = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((value, ctx) => {
      const minor = decimalStringToMinor(value);
      if (minor === null || minor <= 0 || minor > HARD_CEILING_MINOR) {
        ctx.addIssue({ code: 'custom', message: `a positive amount with at most 2 decimals, up to ${HARD_CEILING_MINOR / 100}` });
        return z.NEVER;
      }
      return minor;
    });

/** Comma-separated origins (`https://shop.example,https://app.example`); each is normalised. */
const OriginList = z
  .string()
  .default('')
  .transform((value, ctx) => {
    const origins: string[] = [];
    for (const item of value
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean)) {
      let url: URL | null = null;
      try {
        url = new URL(item);
      } catch {
        url = null;
      }
      if (!url || !/^https?:$/.test(url.protocol) || url.origin !== item.replace(/\/+$/, '')) {
        ctx.addIssue({ code: 'custom', message: `"${item}" is not an http(s) origin such as https://shop.example` });
        return z.NEVER;
      }
      origins.push(url.origin);
    }
    return origins;
  });

export const WalletEnv = serviceEnv(8081).extend({
  /** The address clients reach us at (the gateway): checkout links and Chapa's callbacks use it. */
  PUBLIC_URL: z
    .string()
    .url()
    .default('http://localhost:8080')
    .transform((url) => url.replace(/\/+$/, '')),
  /** No default here: production must name it (see `loadConfig`). */
  PAYMENT_PROVIDER: z.enum(['sandbox', 'chapa']).optional(),
  ALLOW_SANDBOX_PAYMENTS: z.enum(['true', 'false']).default('false'),
  MERCHANT_NAME: z.string().min(1).default('Marketplace'),
  CHAPA_BASE_URL: z.string().url().default('https://api.chapa.co'),
  CHAPA_SECRET_KEY: z.string().default(''),
  CHAPA_WEBHOOK_SECRET: z.string().default(''),
  CHAPA_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  TOPUP_EXPIRY_MINUTES: z.coerce.number().int().min(1).max(1440).default(30),
  /** Largest single top-up and transfer, and the balance no wallet may pass (major units). */
  TOPUP_MAX_AMOUNT: MajorAmount('1000000.00'),
  TRANSFER_MAX_AMOUNT: MajorAmount('1000000.00'),
  WALLET_BALANCE_CEILING: MajorAmount('10000000.00'),
  /** Where a top-up may send the payer back; empty outside production means localhost only. */
  CHECKOUT_REDIRECT_ORIGINS: OriginList,
  /**
   * The credential other services present on `/internal/*` (header `x-internal-token`); at
   * least 32 characters. Empty: the internal API answers 401 to everyone.
   */
  INTERNAL_API_TOKEN: z.union([z.literal(''), z.string().min(32, 'at least 32 characters')]).default(''),
  /** Platform fee on what a seller receives for a booking, in basis points (100 = 1 %). */
  PLATFORM_FEE_BPS: z.coerce.number().int().min(0).max(10_000).default(0),
  /**
   * How long after the slot's end the capture of a no-show waits: the buyer may dispute it
   * meanwhile (a disputed capture waits for an admin), and an admin may void it.
   */
  NO_SHOW_DISPUTE_WINDOW_MINUTES: z.coerce.number().int().min(0).max(43_200).default(1440),
  LIMIT_DAILY: z.coerce.number().int().min(0).default(10),
  LIMIT_WEEKLY: z.coerce.number().int().min(0).default(50),
  LIMIT_MONTHLY: z.coerce.number().int().min(0).default(150),
  SWEEP_INTERVAL_MS: z.coerce.number().int().positive().default(5_000),
});
type ParsedWalletEnv = z.infer<typeof WalletEnv>;
export type WalletConfig = Omit<ParsedWalletEnv, 'PAYMENT_PROVIDER'> & { PAYMENT_PROVIDER: 'sandbox' | 'chapa' };

function refuse(reason: string): never {
  throw new Error(`Invalid configuration:\n  ${reason}`);
}

/**
 * Parses the wallet's environment and refuses configurations that would hand out money: in
 * production the payment provider must be named, and the sandbox (whose Pay button is the
 * payment) needs ALLOW_SANDBOX_PAYMENTS=true on top; Chapa needs its keys; production needs
 * its redirect origins.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<WalletConfig> {
  const parsed = parseConfig(WalletEnv, env);
  const production = parsed.NODE_ENV === 'production';
  if (production && !parsed.PAYMENT_PROVIDER) refuse('PAYMENT_PROVIDER must be set explicitly in production (chapa)');
  const provider = parsed.PAYMENT_PROVIDER ?? 'sandbox';
  if (production && provider === 'sandbox' && parsed.ALLOW_SANDBOX_PAYMENTS !== 'true')
    refuse('PAYMENT_PROVIDER=sandbox in production needs ALLOW_SANDBOX_PAYMENTS=true (its Pay button creates money)');
  if (provider === 'chapa' && (!parsed.CHAPA_SECRET_KEY || !parsed.CHAPA_WEBHOOK_SECRET))
    refuse('CHAPA_SECRET_KEY and CHAPA_WEBHOOK_SECRET are required with PAYMENT_PROVIDER=chapa');
  if (production && parsed.CHECKOUT_REDIRECT_ORIGINS.length === 0)
    refuse('CHECKOUT_REDIRECT_ORIGINS must list the origins top-ups may return to in production');
  if (production && !parsed.INTERNAL_API_TOKEN) refuse('INTERNAL_API_TOKEN is required in production (paid bookings)');
  if (parsed.TOPUP_MAX_AMOUNT > parsed.WALLET_BALANCE_CEILING || parsed.TRANSFER_MAX_AMOUNT > parsed.WALLET_BALANCE_CEILING)
    refuse('TOPUP_MAX_AMOUNT and TRANSFER_MAX_AMOUNT cannot exceed WALLET_BALANCE_CEILING');
  return Object.freeze({ ...parsed, PAYMENT_PROVIDER: provider });
}
