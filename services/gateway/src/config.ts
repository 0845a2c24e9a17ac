import { z } from 'zod';
import { parseConfig, pemFromEnv, serviceEnv } from '@mkt/kit';

const url = z.string().url();

export const GatewayEnv = serviceEnv(8080).extend({
  JWT_PRIVATE_KEY: z.string().min(1).transform(pemFromEnv),
  JWT_KEY_ID: z.string().min(1).default('gateway-1'),
  ACCESS_TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(900),
  REFRESH_TOKEN_TTL_DAYS: z.coerce.number().int().min(1).max(365).default(30),
  BCRYPT_ROUNDS: z.coerce.number().int().min(4).max(15).default(12),
  ADMIN_EMAIL: z.string().email().optional(),
  ADMIN_PASSWORD: z.string().min(8).optional(),
  ADMIN_NAME: z.string().min(1).default('Administrator'),
  WALLET_URL: url.default('http://127.0.0.1:8081'),
  CATALOG_URL: url.default('http://127.0.0.1:8082'),
  CRM_URL: url.default('http://127.0.0.1:8083'),
  CONSULTATION_URL: url.default('http://127.0.0.1:8084'),
  REVIEW_URL: url.default('http://127.0.0.1:8085'),
  UPSTREAM_TIMEOUT_MS: z.coerce.number().int().positive().default(15_000),
  RATE_LIMIT_IP_PER_MIN: z.coerce.number().int().min(0).default(1200),
  RATE_LIMIT_USER_PER_MIN: z.coerce.number().int().min(0).default(600),
  CORS_ORIGINS: z.string().default('*'),
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(1024 * 1024),
});
export type GatewayConfig = z.infer<typeof GatewayEnv>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<GatewayConfig> {
  return parseConfig(GatewayEnv, env);
}
