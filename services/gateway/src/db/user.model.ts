import mongoose, { Schema } from 'mongoose';
import { newUuid, type IntegrationEvent, type Role } from '@mkt/contracts';
import { pendingEventsField } from '@mkt/kit';

export interface UserDoc {
  _id: string;
  referenceId: string;
  email: string;
  passwordHash: string;
  fullName: string;
  role: Role;
  createdAt: Date;
  updatedAt: Date;
  pendingEvents: IntegrationEvent[];
}

const userSchema = new Schema<UserDoc>(
  {
    _id: { type: String, default: newUuid },
    referenceId: { type: String, required: true, unique: true },
    email: { type: String, required: true, unique: true },
    passwordHash: { type: String, required: true },
    fullName: { type: String, required: true },
    role: { type: String, required: true, enum: ['buyer', 'seller', 'admin'] },
    pendingEvents: pendingEventsField,
  },
  { timestamps: true, versionKey: false },
);

export const User = mongoose.model<UserDoc>('User', userSchema, 'users');
