import type { z } from 'zod';
import { parseConfig, serviceEnv } from '@mkt/kit/runtime';

export const CatalogEnv = serviceEnv(8082);
export type CatalogConfig = z.infer<typeof CatalogEnv>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<CatalogConfig> {
  return parseConfig(CatalogEnv, env);
}
