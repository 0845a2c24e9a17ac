import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The contracts package's version: `info.version` of the OpenAPI and AsyncAPI documents (they
 * change with the contracts, and a contracts release names them).
 */
export function contractsVersion(): string {
  // `src/` in tests, `dist/` when built: the package's own package.json is one level up from both.
  const manifest = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string };
  return manifest.version;
}
