import mongoose, { Schema } from 'mongoose';

/**
 * Failed sign-ins of one account name from one client address within a fixed window. `_id` is
 * the SHA-256 of the lower-cased email and the address key, whether an account has that email
 * or not, so the throttle says nothing about which emails exist.
 */
export interface LoginAttemptDoc {
  _id: string;
  failures: number;
  windowEndsAt: Date;
}

const loginAttemptSchema = new Schema<LoginAttemptDoc>(
  {
    _id: { type: String, required: true },
    failures: { type: Number, required: true },
    windowEndsAt: { type: Date, required: true, index: true },
  },
  { versionKey: false },
);

export const LoginAttempt = mongoose.model<LoginAttemptDoc>('LoginAttempt', loginAttemptSchema, 'login_attempts');

/**
 * Failed sign-ins of one account name from every address (`_id`: the SHA-256 of the
 * lower-cased email), forgotten at `forgetAt`, and when each of the two lanes of attempts may
 * next try: addresses new to the account, and addresses that have already failed on it.
 */
export interface LoginAccountDoc {
  _id: string;
  failures: number;
  forgetAt: Date;
  newAddressesAt: Date;
  failingAddressesAt: Date;
}

const loginAccountSchema = new Schema<LoginAccountDoc>(
  {
    _id: { type: String, required: true },
    failures: { type: Number, required: true },
    forgetAt: { type: Date, required: true, index: true },
    newAddressesAt: { type: Date, required: true },
    failingAddressesAt: { type: Date, required: true },
  },
  { versionKey: false },
);

export const LoginAccount = mongoose.model<LoginAccountDoc>('LoginAccount', loginAccountSchema, 'login_accounts');
