import fs from 'node:fs';
import path from 'node:path';

/** The MongoDB query and update operators a filter or an update is written with. */
const OPERATOR =
  /\$(set|setOnInsert|unset|inc|mul|min|max|push|pull|pullAll|addToSet|pop|rename|currentDate|eq|ne|gt|gte|lt|lte|in|nin|exists|or|and|nor|not|elemMatch|expr|regex|size|all|where)\b/;
const CAST = /\bas never\b|\bas unknown as\b/;

/** The TypeScript files under `folder` (none when it does not exist), each with its text. */
function sources(folder: string): Array<[string, string]> {
  if (!fs.existsSync(folder)) return [];
  return fs
    .readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => [file, fs.readFileSync(path.join(folder, file), 'utf8')]);
}

/**
 * Where a service's decide/apply seam is not typed, by file: a repository (`db/`) that casts a
 * filter or an update through `never` or `unknown`, a domain file (`domain/`) that writes a
 * MongoDB operator. The domain decides in its own typed terms; the repository alone turns the
 * decision into the driver's filter and update, typed by the record.
 */
export function untypedSeams(src: string): { casts: string[]; operators: string[] } {
  return {
    casts: sources(path.join(src, 'db'))
      .filter(([, text]) => CAST.test(text))
      .map(([file]) => `db/${file}`),
    operators: sources(path.join(src, 'domain'))
      .filter(([, text]) => OPERATOR.test(text))
      .map(([file]) => `domain/${file}`),
  };
}
