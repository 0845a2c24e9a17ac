import path from 'node:path';
import { untypedSeams } from '@mkt/infra';

test('the decide/apply seam is typed: no cast through never or unknown in db/, no MongoDB operator in domain/', () => {
  expect(untypedSeams(path.join(__dirname, '../src'))).toEqual({ casts: [], operators: [] });
});
