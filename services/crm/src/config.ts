import type { z } from 'zod';
import { parseConfig, serviceEnv } from '@mkt/kit/runtime';

export const CrmEnv = serviceEnv(8083);
export type CrmConfig = z.infer<typeof CrmEnv>;

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<CrmConfig> {
  return parseConfig(CrmEnv, env);
}
