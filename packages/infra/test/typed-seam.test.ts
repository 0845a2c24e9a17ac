import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { untypedSeams } from '../src/typed-seam';

test('names a repository that casts through never or unknown and a domain file that writes an operator', () => {
  const src = fs.mkdtempSync(path.join(os.tmpdir(), 'seam-'));
  try {
    fs.mkdirSync(path.join(src, 'db/nested'), { recursive: true });
    fs.mkdirSync(path.join(src, 'domain'));
    fs.writeFileSync(path.join(src, 'db/typed.repository.ts'), 'export const f = (x: Filter<Doc>) => x;\n');
    fs.writeFileSync(path.join(src, 'db/nested/loose.repository.ts'), 'model.updateOne(filter as never, update);\n');
    fs.writeFileSync(path.join(src, 'db/other.repository.ts'), 'const f = raw as unknown as Filter<Doc>;\n');
    fs.writeFileSync(path.join(src, 'domain/rule.ts'), "export const change = { set: { status: 'Done' } };\n");
    fs.writeFileSync(path.join(src, 'domain/leaky.ts'), 'export const update = { $inc: { version: 1 } };\n');
    const found = untypedSeams(src);
    expect(found.casts.sort()).toEqual(['db/nested/loose.repository.ts', 'db/other.repository.ts']);
    expect(found.operators).toEqual(['domain/leaky.ts']);
  } finally {
    fs.rmSync(src, { recursive: true, force: true });
  }
});

test('a service without db/ or domain/ has nothing to name', () => {
  expect(untypedSeams(path.join(os.tmpdir(), 'no-such-service-src'))).toEqual({ casts: [], operators: [] });
});
