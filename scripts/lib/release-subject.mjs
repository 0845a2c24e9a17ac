// The subject of a release commit, as `npm run release` writes it: `release: <name>@<version>, …`
// (semver, an optional pre-release). Only such a commit is a release point (the contract gates'
// baseline, the mixed-version run's previous release): an ordinary commit titled "release: notes
// for …" is not one.
const TAG = String.raw`[\w-]+@\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?`;
export const RELEASE_SUBJECT = new RegExp(`^release: (${TAG}(?:, ${TAG})*)$`);

/** The `<name>@<version>` tags a release commit's subject names; null for any other subject. */
export function releaseTagsOf(subject) {
  const match = RELEASE_SUBJECT.exec(subject);
  return match ? match[1].split(', ') : null;
}
