import { ErrorCode } from '@mkt/contracts/gateway';
import { AppError, Conflict, Unauthenticated } from '@mkt/kit/domain';

export class EmailTaken extends Conflict {
  constructor() {
    super('An account with this email exists already');
  }
}

/** The same answer whether the email or the password was wrong. */
export class InvalidCredentials extends Unauthenticated {
  constructor() {
    super('Invalid email or password');
  }
}

export class InvalidRefreshToken extends AppError {
  constructor() {
    super(401, 'unauthenticated', 'The refresh token is not valid');
  }
}

/** More sign-ins waiting for a password hash than the queue holds: 503, try again shortly. */
export class PasswordHashingBusy extends AppError {
  constructor() {
    super(503, ErrorCode.unavailable, 'Too many sign-ins at once; try again shortly', [], { 'Retry-After': '1' });
  }
}

/** A limit that must hold could not be checked (the database is away): 503, try again shortly. */
export class LimitUnchecked extends AppError {
  constructor() {
    super(503, ErrorCode.unavailable, 'The request limit cannot be checked; try again shortly', [], { 'Retry-After': '1' });
  }
}
