/**
 * `@mkt/contracts/references`: the references' kinds, formats and generators without their zod
 * schemas (`referenceOf`, `ReferencePrefix` and `Uuid` stay in the index).
 */
export * from '../reference-ids';
