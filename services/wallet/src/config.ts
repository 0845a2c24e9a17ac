import { z } from 'zod';
import { parseConfig, serviceEnv } from '@mkt/kit';

export const WalletEnv = serviceEnv(8081).extend({
  /** The address clients reach us at (the gateway): checkout links and Chapa's callbacks use it. */
  PUBLIC_URL: z
    .string()
    .url()
    .default('http://localhost:8080')
    .transform((url) => url.replace(/\/+$/, '')),
  PAYMENT_PROVIDER: z.enum(['sandbox', 'chapa']).default('sandbox'),
  MERCHANT_NAME: z.string().min(1).default('Marketplace'),
  CHAPA_BASE_URL: z.string().url().default('https://api.chapa.co'),
  CHAPA_SECRET_KEY: z.string().default(''),
  CHAPA_WEBHOOK_SECRET: z.string().default(''),
  CHAPA_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  TOPUP_EXPIRY_MINUTES: z.coerce.number().int().min(1).max(1440).default(30),
  LIMIT_DAILY: z.coerce.number().int().min(0).default(10),
  LIMIT_WEEKLY: z.coerce.number().int().min(0).default(50),
  LIMIT_MONTHLY: z.coerce.number().int().min(0).default(150),
  SWEEP_INTERVAL_MS: z.coerce.number().int().positive().default(5_000),
});
export type WalletConfig = z.infer<typeof WalletEnv>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<WalletConfig> {
  const config = parseConfig(WalletEnv, env);
  if (config.PAYMENT_PROVIDER === 'chapa' && (!config.CHAPA_SECRET_KEY || !config.CHAPA_WEBHOOK_SECRET)) {
    throw new Error('Invalid configuration:\n  CHAPA_SECRET_KEY and CHAPA_WEBHOOK_SECRET are required with PAYMENT_PROVIDER=chapa');
  }
  return config;
}
