import { indexBuildMigration } from '@mkt/kit/db';

/**
 * The eligibility index on `consultationReferenceId` (the model declares the same; a database
 * made by this release gets it from `0001-indexes`, one made before from this).
 */
const CONSULTATION_REFERENCE_INDEX = {
  collection: 'eligibility',
  key: { consultationReferenceId: 1 },
  name: 'consultationReferenceId_1',
} as const;

/**
 * Every public listing of a consultation's reviews finds the consultation's id from the key it was
 * given (`consultationIdOf`: a reference, or an id read as is). With no index on the reference,
 * each listing scanned every eligibility record (one per buyer and consultation, growing with the
 * service's whole history), and a key that is no reference read them all; through this index it
 * reads the one it needs. Building an index that exists changes nothing: a run again after a crash
 * is safe.
 *
 * Reversible: `down` drops the index (the previous release neither reads nor names it).
 */
export const consultationReferenceIndex = indexBuildMigration('0002-consultation-reference-index', [CONSULTATION_REFERENCE_INDEX]);
