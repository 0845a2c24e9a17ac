import { ErrorCode, type ErrorItem } from '@mkt/contracts/catalog';
import { AppError, Conflict } from '@mkt/kit/domain';

/** 422: well-formed fields that do not fit the category or each other (ADR 0004, contracts `RULE`). */
export class InvalidProduct extends AppError {
  constructor(items: ErrorItem[]) {
    super(422, ErrorCode.invalid, 'Validation failed', items);
  }
}

/*
 * Unique keys decide races (the database's unique index): of two creates with one slug, or one
 * owner's SKU, one wins; the other gets these.
 */

export class SlugTaken extends Conflict {
  constructor() {
    super('A shop with this slug exists already');
  }
}

export class SkuTaken extends AppError {
  constructor() {
    super(409, ErrorCode.conflict, 'You have a product with this SKU already', [
      { path: 'sku', code: ErrorCode.conflict, message: 'SKU taken' },
    ]);
  }
}
