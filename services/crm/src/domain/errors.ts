import { ErrorCode } from '@mkt/contracts/crm';
import { AppError, Conflict, RuleViolation } from '@mkt/kit/domain';

/** Of two creates for one pair, the unique index lets one win; the other (and a repeat) is 409. */
export class PairTaken extends Conflict {
  constructor() {
    super('This seller and buyer have a relationship already');
  }
}

/** An admin named a seller that is not known (or not a seller): 404 on `sellerId`. */
export class UnknownSeller extends AppError {
  constructor() {
    const message = 'No seller with this id or reference is known';
    super(404, ErrorCode.notFound, message, [{ path: 'sellerId', code: ErrorCode.notFound, message }]);
  }
}

/**
 * The one answer for every buyer a seller may not name: unknown, not a buyer (the admin, a rival
 * seller, the seller itself) or a buyer who never booked with this seller. It says nothing about
 * which, so it cannot be used to find out who exists or what role they have.
 */
export class NotACustomer extends RuleViolation {
  constructor() {
    super(ErrorCode.notEligible, 'Name a buyer who has booked with this seller', 'buyerId');
  }
}

/** Following is the buyer's choice: a seller's create or update that would change it is 403 on `isFollower`. */
export class FollowIsTheBuyers extends AppError {
  constructor() {
    const message = 'Only the buyer follows or unfollows a seller';
    super(403, ErrorCode.forbidden, message, [{ path: 'isFollower', code: ErrorCode.forbidden, message }]);
  }
}
