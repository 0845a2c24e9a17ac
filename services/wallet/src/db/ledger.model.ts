import mongoose, { Schema } from 'mongoose';
import type { LedgerEntryType } from './wallet.model';

export interface LedgerEntryDoc {
  _id: string;
  walletId: string;
  type: LedgerEntryType;
  availableDeltaMinor: number;
  heldDeltaMinor: number;
  reference: string;
  createdAt: Date;
}

const ledgerSchema = new Schema<LedgerEntryDoc>(
  {
    _id: { type: String, required: true },
    walletId: { type: String, required: true, index: true },
    type: { type: String, required: true },
    availableDeltaMinor: { type: Number, required: true },
    heldDeltaMinor: { type: Number, required: true },
    reference: { type: String, required: true },
    createdAt: { type: Date, required: true },
  },
  { versionKey: false },
);

/** Append-only; an entry's id is its op id, so moving it twice keeps one. */
export const LedgerEntryModel = mongoose.model<LedgerEntryDoc>('LedgerEntry', ledgerSchema, 'ledger_entries');
