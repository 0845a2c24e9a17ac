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
