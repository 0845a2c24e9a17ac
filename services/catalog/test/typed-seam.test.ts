import fs from 'node:fs';
import path from 'node:path';

/** The TypeScript files under a folder of src/, each with its text. */
const sources = (folder: string): Array<[string, string]> =>
  fs
    .readdirSync(path.join(__dirname, '../src', folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => [path.join(folder, file), fs.readFileSync(path.join(__dirname, '../src', folder, file), 'utf8')]);

/** The MongoDB query and update operators a filter or an update is written with. */
const OPERATOR =
  /\$(set|setOnInsert|unset|inc|mul|min|max|push|pull|pullAll|addToSet|pop|rename|currentDate|eq|ne|gt|gte|lt|lte|in|nin|exists|or|and|nor|not|elemMatch|expr|regex|size|all|where)\b/;

describe('the decide/apply seam is typed', () => {
  test('the repositories write filters and updates typed by the records: no cast through never or unknown in db/', () => {
    const casts = sources('db').filter(([, text]) => /\bas never\b|\bas unknown as\b/.test(text));
    expect(casts.map(([file]) => file)).toEqual([]);
  });

  test('the domain decides in its own terms: no MongoDB operator in domain/', () => {
    const operators = sources('domain').filter(([, text]) => OPERATOR.test(text));
    expect(operators.map(([file]) => file)).toEqual([]);
  });
});
