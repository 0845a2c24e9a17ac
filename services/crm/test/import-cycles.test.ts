import path from 'node:path';
import { importCycles } from '@mkt/infra';

test('no import cycle among the files of src/ (type imports count too)', () => {
  expect(importCycles(path.join(__dirname, '../src'))).toEqual([]);
});
