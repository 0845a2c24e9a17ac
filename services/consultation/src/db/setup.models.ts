import mongoose, { Schema } from 'mongoose';
import type { AvailabilityRule } from '@mkt/contracts';
import { freeFormArrayField, windowedCounterSchema, type WindowedCounterDoc } from '@mkt/kit';

const timestamps = { timestamps: true, versionKey: false } as const;

export interface RuleSetDoc {
  _id: string;
  referenceId: string;
  sellerId: string;
  name: string;
  description: string;
  status: 'Active';
  timezone: string;
  durationType: string;
  isDefault: boolean;
  metaData: { autoAccept: boolean; bufferTime: number; maxBookingsPerDay: number };
  availabilityRules: AvailabilityRule[];
  createdAt: Date;
  updatedAt: Date;
}
export const RuleSet = mongoose.model<RuleSetDoc>(
  'RuleSet',
  new Schema<RuleSetDoc>(
    {
      _id: String,
      referenceId: { type: String, required: true, unique: true },
      sellerId: { type: String, required: true, index: true },
      name: String,
      description: String,
      status: { type: String, default: 'Active' },
      timezone: String,
      durationType: String,
      isDefault: Boolean,
      metaData: { type: Schema.Types.Mixed, required: true },
      availabilityRules: freeFormArrayField,
    },
    timestamps,
  ),
  'availability_rule_sets',
);

export interface PricingDoc {
  _id: string;
  referenceId: string;
  sellerId: string;
  basePriceMinor: number;
  currency: string;
  pricingStrategy: string;
  comparePriceMinor: number | null;
  isOnSale: boolean;
  isActive: boolean;
  createdAt: Date;
}
export const Pricing = mongoose.model<PricingDoc>(
  'Pricing',
  new Schema<PricingDoc>(
    {
      _id: String,
      referenceId: { type: String, required: true, unique: true },
      sellerId: { type: String, required: true, index: true },
      basePriceMinor: Number,
      currency: String,
      pricingStrategy: String,
      comparePriceMinor: { type: Number, default: null },
      isOnSale: Boolean,
      isActive: Boolean,
    },
    timestamps,
  ),
  'pricing',
);

export interface DiscountDoc {
  _id: string;
  referenceId: string;
  sellerId: string;
  name: string;
  description: string;
  discountType: 'Percentage' | 'Fixed';
  /** A percentage, or minor units for Fixed. */
  discountValue: number;
  validFrom: Date;
  validTo: Date;
  couponCode: string;
  maxUses: number;
  uses: number;
  /** Bookings holding a use: makes taking and giving back a use idempotent. */
  usedBy: string[];
  isActive: boolean;
  createdAt: Date;
}
const discountSchema = new Schema<DiscountDoc>(
  {
    _id: String,
    referenceId: { type: String, required: true, unique: true },
    sellerId: { type: String, required: true },
    name: String,
    description: String,
    discountType: String,
    discountValue: Number,
    validFrom: Date,
    validTo: Date,
    couponCode: { type: String, required: true },
    maxUses: Number,
    uses: { type: Number, default: 0 },
    usedBy: { type: [String], default: [] },
    isActive: Boolean,
  },
  timestamps,
);
discountSchema.index({ sellerId: 1, couponCode: 1 }, { unique: true });
export const Discount = mongoose.model<DiscountDoc>('Discount', discountSchema, 'promotional_discounts');

/** Coupon checks of one user in one minute (`_id` = `user|2030-05-01T10:00`), for the throttle. */
export const CouponCheck = mongoose.model<WindowedCounterDoc>('CouponCheck', windowedCounterSchema(), 'coupon_checks');

export interface VisibilityRuleDoc {
  type: 'user_type' | 'location';
  condition: string;
  action: 'show' | 'hide';
  priority: number;
}
export interface VisibilityRuleSetDoc {
  _id: string;
  referenceId: string;
  sellerId: string;
  name: string;
  description: string;
  isDefault: boolean;
  isActive: boolean;
  validFrom: Date;
  validTo: Date;
  visibilityRules: VisibilityRuleDoc[];
  createdAt: Date;
}
export const VisibilityRuleSet = mongoose.model<VisibilityRuleSetDoc>(
  'VisibilityRuleSet',
  new Schema<VisibilityRuleSetDoc>(
    {
      _id: String,
      referenceId: { type: String, required: true, unique: true },
      sellerId: { type: String, required: true, index: true },
      name: String,
      description: String,
      isDefault: Boolean,
      isActive: Boolean,
      validFrom: Date,
      validTo: Date,
      visibilityRules: freeFormArrayField,
    },
    timestamps,
  ),
  'visibility_rule_sets',
);

export interface ConsultationDoc {
  _id: string;
  referenceId: string;
  sellerId: string;
  /** The seller's USR reference (from their token at creation): a booking may name the seller by it. Null on older records. */
  sellerRef?: string | null;
  title: string;
  description: string;
  duration: number;
  sessionType: 'OneToOne' | 'Group';
  maxCapacity: number;
  deliveryMode: string;
  timezone: string;
  language: string;
  category: string;
  subcategory: string[];
  tags: string[];
  ruleSetId: string;
  pricingId: string;
  currentStatus: 'Pending' | 'Approved';
  visibility: 'Hidden' | 'Published';
  averageRating: number;
  totalReviews: number;
  /** An edit of the public text of an Approved consultation, waiting for an admin (see `decideEdit`). */
  pendingRevision?: PendingRevisionDoc | null;
  createdAt: Date;
  updatedAt: Date;
}
/** The public text of a consultation: what an edit of an Approved one sends to review first. */
export const PUBLIC_TEXT_FIELDS = ['title', 'description', 'category', 'subcategory', 'tags', 'language'] as const;
export type PublicText = Partial<Pick<ConsultationDoc, (typeof PUBLIC_TEXT_FIELDS)[number]>>;
export interface PendingRevisionDoc {
  id: string;
  submittedAt: Date;
  /** The fields it changes, with their new values. */
  changes: PublicText;
}
const consultationSchema = new Schema<ConsultationDoc>(
  {
    _id: String,
    referenceId: { type: String, required: true, unique: true },
    sellerId: { type: String, required: true, index: true },
    sellerRef: { type: String, default: null },
    title: String,
    description: String,
    duration: Number,
    sessionType: String,
    maxCapacity: Number,
    deliveryMode: String,
    timezone: String,
    language: String,
    category: String,
    subcategory: [String],
    tags: [String],
    ruleSetId: { type: String, required: true, index: true },
    pricingId: String,
    currentStatus: { type: String, default: 'Pending' },
    visibility: { type: String, default: 'Hidden' },
    averageRating: { type: Number, default: 0 },
    totalReviews: { type: Number, default: 0 },
    pendingRevision: { type: Schema.Types.Mixed, default: undefined },
  },
  timestamps,
);
consultationSchema.index({ currentStatus: 1, visibility: 1, createdAt: -1 });
export const Consultation = mongoose.model<ConsultationDoc>('Consultation', consultationSchema, 'consultations');

/**
 * Ratings, one entry per review (so a repeat changes nothing): made by `review.created` or by
 * the first `review.visibility_changed`, whichever comes first. A hidden review's entry stays,
 * `isActive: false`, out of the average; `visibilitySequence` is the latest change applied.
 */
export interface RatingEntryDoc {
  _id: string;
  consultationId: string;
  rating: number;
  isActive?: boolean;
  visibilitySequence?: number;
}
export const RatingEntry = mongoose.model<RatingEntryDoc>(
  'RatingEntry',
  new Schema<RatingEntryDoc>(
    { _id: String, consultationId: { type: String, index: true }, rating: Number, isActive: Boolean, visibilitySequence: Number },
    { versionKey: false },
  ),
  'rating_entries',
);
