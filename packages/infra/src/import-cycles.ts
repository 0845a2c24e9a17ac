import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** An import or export statement naming a relative module (type-only ones too: a cycle of types is still a cycle). */
const STATEMENT = /^[ \t]*(?:import|export)\b[^;]*?\bfrom\s*['"](\.{1,2}\/[^'"]*)['"]/gm;
/** `import './x';`, for its side effects. */
const BARE_IMPORT = /^[ \t]*import\s*['"](\.{1,2}\/[^'"]*)['"]/gm;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return sourceFiles(file);
    return file.endsWith('.ts') && !file.endsWith('.d.ts') ? [file] : [];
  });
}

function resolve(from: string, specifier: string): string | undefined {
  const base = path.resolve(path.dirname(from), specifier.replace(/\.js$/, ''));
  return [`${base}.ts`, path.join(base, 'index.ts')].find((candidate) => existsSync(candidate));
}

/**
 * The import cycles among the TypeScript files under `dir` (relative imports only), each as the
 * files around it relative to `dir`, first file repeated at the end; none: `[]`. Each cycle is
 * reported once, from the file the walk reached it by.
 */
export function importCycles(dir: string): string[][] {
  const files = sourceFiles(dir);
  const edges = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const targets = [...text.matchAll(STATEMENT), ...text.matchAll(BARE_IMPORT)].map((match) => resolve(file, match[1]!));
    edges.set(file, [...new Set(targets.filter((target): target is string => target !== undefined))]);
  }
  const cycles: string[][] = [];
  const done = new Set<string>();
  const stack: string[] = [];
  const visit = (file: string): void => {
    stack.push(file);
    for (const target of edges.get(file) ?? []) {
      const at = stack.indexOf(target);
      if (at >= 0) cycles.push([...stack.slice(at), target].map((f) => path.relative(dir, f)));
      else if (!done.has(target)) visit(target);
    }
    stack.pop();
    done.add(file);
  };
  for (const file of files.sort()) if (!done.has(file)) visit(file);
  return cycles;
}
