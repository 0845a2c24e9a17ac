import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

// What a platform team expects of the repository itself: who reviews each part (CODEOWNERS), how
// dependencies are kept current (Renovate), and under which licence the code is given.
const root = join(__dirname, '..', '..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');

/** CODEOWNERS rules as [pattern, owners] pairs, comments and blank lines left out. */
function ownerRules(): Array<[string, string[]]> {
  return read('.github/CODEOWNERS')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const [pattern, ...owners] = line.split(/\s+/);
      return [pattern!, owners];
    });
}

describe('CODEOWNERS', () => {
  test('every service has its own owners, and the rest of the tree falls to the platform team', () => {
    const rules = ownerRules();
    const services = readdirSync(join(root, 'services'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    for (const service of services) {
      const rule = rules.find(([pattern]) => pattern === `/services/${service}/`);
      expect({ service, owners: rule?.[1] ?? [] }).toEqual({ service, owners: [expect.stringMatching(/^@[\w-]+\/[\w-]+$/)] });
    }
    expect(rules[0]).toEqual(['*', ['@marketplace/platform']]);
  });

  test('every pattern names a path that exists, and every rule names an owner', () => {
    for (const [pattern, owners] of ownerRules()) {
      expect({ pattern, owners: owners.length > 0 }).toEqual({ pattern, owners: true });
      if (pattern !== '*') expect({ pattern, exists: existsSync(join(root, pattern)) }).toEqual({ pattern, exists: true });
    }
  });
});

describe('Renovate', () => {
  const config = JSON.parse(read('renovate.json')) as {
    packageRules: Array<{ matchPackageNames?: string[]; matchDatasources?: string[]; groupName?: string; pinDigests?: boolean }>;
  };

  test('OpenTelemetry packages are updated as one group', () => {
    const rule = config.packageRules.find((r) => r.groupName === 'OpenTelemetry');
    expect(rule?.matchPackageNames).toEqual(['@opentelemetry/**']);
  });

  test('base images are pinned by digest', () => {
    expect(config.packageRules.find((r) => r.matchDatasources?.includes('docker'))?.pinDigests).toBe(true);
  });
});

describe('licence', () => {
  test('the repository carries the Apache License 2.0 and the root package says so', () => {
    expect(read('LICENSE')).toMatch(/^Apache License\s+Version 2\.0, January 2004/);
    expect((JSON.parse(read('package.json')) as { license?: string }).license).toBe('Apache-2.0');
  });
});
