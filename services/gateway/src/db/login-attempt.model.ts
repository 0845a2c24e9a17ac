import mongoose, { Schema } from 'mongoose';

/**
 * Failed sign-ins of one account name (the SHA-256 of the lower-cased email, whether an account
 * has it or not, so the throttle says nothing about which emails exist) within a fixed window.
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
