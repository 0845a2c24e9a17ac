import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { tmpdir } from 'node:os';
import { importCycles } from '@mkt/infra';

test('no import cycle among the files of src/ (type imports count too)', () => {
  expect(importCycles(path.join(__dirname, '../src'))).toEqual([]);
});

test('a cycle is found, named by its files (also through a type import and an index)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cycles-'));
  mkdirSync(path.join(dir, 'http'));
  writeFileSync(path.join(dir, 'app.ts'), "import { handlers } from './http';\nexport const app = handlers;\n");
  writeFileSync(
    path.join(dir, 'http', 'index.ts'),
    "import type { Parts } from '../composition';\nexport const handlers = (p: Parts) => p;\n",
  );
  writeFileSync(path.join(dir, 'composition.ts'), "import { app } from './app';\nexport type Parts = typeof app;\n");
  writeFileSync(path.join(dir, 'alone.ts'), "// import { app } from './app';\nexport const alone = 1;\n");
  expect(importCycles(dir)).toEqual([['app.ts', 'http/index.ts', 'composition.ts', 'app.ts']]);
});
