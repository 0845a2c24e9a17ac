import type { z } from 'zod';
import { parseConfig, serviceEnv } from '@mkt/kit';

export const WalletEnv = serviceEnv(8081);
export type WalletConfig = z.infer<typeof WalletEnv>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<WalletConfig> {
  return parseConfig(WalletEnv, env);
}
