import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

// The tools image (docker/tools.Dockerfile) copies the operations scripts one by one: every module
// they import from the checkout (./lib/…) must be copied too, or the command fails in the image
// only. Read from the Dockerfile and the scripts, so a new import without its COPY fails here.
const root = join(__dirname, '..', '..');

/** The checkout's script files the Dockerfile copies from the build context (not from a stage). */
function copiedScripts(dockerfile: string): string[] {
  return dockerfile
    .split('\n')
    .filter((line) => /^COPY\s/.test(line) && !line.includes('--from='))
    .flatMap((line) => line.trim().split(/\s+/).slice(1, -1))
    .filter((source) => source.startsWith('scripts/'));
}

/** The relative modules a script imports (static and dynamic), as paths from the root. */
function localImports(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  const specifiers = [...text.matchAll(/(?:from\s+|import\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)].map(([, specifier]) => specifier!);
  return specifiers.map((specifier) => relative(root, normalize(join(root, dirname(file), specifier))));
}

test('every module the copied operations scripts import is copied into the tools image', () => {
  const copied = copiedScripts(readFileSync(join(root, 'docker', 'tools.Dockerfile'), 'utf8'));
  expect(copied).toEqual(
    expect.arrayContaining(['scripts/tools.mjs', 'scripts/backup.mjs', 'scripts/dlq.mjs', 'scripts/migrate-queues.mjs']),
  );
  const missing: string[] = [];
  const seen = new Set<string>();
  const queue = [...copied];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    if (seen.has(file)) continue;
    seen.add(file);
    for (const imported of localImports(file)) {
      if (!imported.startsWith('scripts/')) continue; // packages and services: copied whole from the build stage
      if (!copied.includes(imported)) missing.push(`${file} imports ${imported}`);
      if (existsSync(join(root, imported))) queue.push(imported);
    }
  }
  expect(missing).toEqual([]);
});

test('the check sees an import whose module is not copied', () => {
  const dockerfile = readFileSync(join(root, 'docker', 'tools.Dockerfile'), 'utf8').replace(' scripts/lib/errors.mjs', '');
  const copied = copiedScripts(dockerfile);
  expect(copied).not.toContain('scripts/lib/errors.mjs');
  expect(localImports('scripts/backup.mjs')).toContain('scripts/lib/errors.mjs');
});
