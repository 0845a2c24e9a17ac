import { ErrorCode } from '@mkt/contracts/review';
import { Conflict, InvalidState, RuleViolation } from '@mkt/kit/domain';

/** A second review of one consultation by one buyer: the unique index lets the first win, 409. */
export class AlreadyReviewed extends Conflict {
  constructor() {
    super('You have reviewed this already');
  }
}

/** Only a buyer with a completed session of the consultation reviews it: 422 otherwise. */
export class NotEligibleToReview extends RuleViolation {
  constructor() {
    super(ErrorCode.notEligible, 'Only a buyer who completed a session of this consultation may review it');
  }
}

/** A conditional write that missed because the review changed between its read and its write: 409. */
export class ReviewChanged extends InvalidState {
  constructor() {
    super('The review changed meanwhile; try again');
  }
}
