import { z } from 'zod';
import { AT_LEAST_ONE_FIELD, EMAIL_PIPE, NON_BLANK, UUID_PIPE } from './schema-meta';
import { Currency, NonNegativeMajorAmount, parseMoney, withMinorNames } from './money';
import { PageQuery } from './pagination';
import { referenceOf } from './references';
import { breakRule, RULE } from './rules';

export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
export const Weekday = z.enum(WEEKDAYS).meta({ id: 'Weekday' });
export type Weekday = z.infer<typeof Weekday>;

const TimeOfDay = z.string().regex(/^([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]$/, 'Expected HH:MM:SS');
const ClockTime = z.string().regex(/^([01][0-9]|2[0-3]):[0-5][0-9]$/, 'Expected HH:MM');
/** A YYYY-MM-DD that names a real day (not 2030-02-30, which `Date` would roll into March). */
const isCalendarDate = (value: string) =>
  !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) && new Date(`${value}T00:00:00Z`).toISOString().startsWith(value);
export const IsoDate = z
  .string()
  .regex(/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/, 'Expected YYYY-MM-DD')
  .refine(isCalendarDate, 'Not a date')
  .meta({ format: 'date' });
const Timestamp = z.string().datetime({ offset: true });
const Text = (max: number) => z.string().trim().min(1).max(max).meta(NON_BLANK);
const Tags = z.array(z.string().trim().min(1).max(40).meta(NON_BLANK)).max(20);
/** An id or a reference of a record. */
const RecordKey = z.string().trim().min(1).max(64).meta(NON_BLANK);
/** A key naming one kind of record: the document says which id and which reference it takes. */
const keyOf = (record: string, id: string, reference: string) =>
  RecordKey.meta({ description: `The ${record}: its id (${id}) or its referenceId (${reference}).` });
const RuleSetKey = keyOf('availability rule set', 'a uuid', 'MKT-AVL-RST-…');
const PricingKey = keyOf('pricing record', 'pr_…', 'PR_…');
const ConsultationKey = keyOf('consultation', 'con_…', 'MKT-CON-…');
const BookingKey = keyOf('booking', 'bk_…', 'BK_…');
/**
 * A user named in a body: their id (a uuid, compared without case) or their USR reference (any
 * prefix). Anything else is 400: a misspelt name never silently means "nobody".
 */
export const UserKey = z
  .union([z.string().trim().toLowerCase().pipe(z.uuid()).meta(UUID_PIPE), referenceOf('USR')], {
    error: 'Expected a user id (uuid) or a USR reference',
  })
  .meta({
    description: 'A user: their id (a uuid, any case) or their USR reference (MKT-USR-…).',
    // One string whose pattern takes either (not `anyOf` two strings: generators make a model of it).
    override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
      const branches = (jsonSchema.anyOf ?? []) as Array<{ pattern?: string }>;
      delete jsonSchema.anyOf;
      Object.assign(jsonSchema, { type: 'string', pattern: branches.map((branch) => `(?:${branch.pattern})`).join('|') });
    },
  });

export const Interval = z
  .object({ start_time: TimeOfDay, end_time: TimeOfDay, enabled: z.boolean().default(true) })
  .strict()
  .refine((interval) => interval.start_time < interval.end_time, {
    message: 'start_time must be before end_time',
    path: ['end_time'],
    params: RULE,
  });

export const AvailabilityRule = z
  .object({ type: z.literal('weekly'), weekday: Weekday, intervals: z.array(Interval).min(1).max(24) })
  .strict()
  .superRefine((rule, ctx) => {
    const sorted = [...rule.intervals].sort((a, b) => a.start_time.localeCompare(b.start_time));
    for (let i = 1; i < sorted.length; i += 1) {
      if (sorted[i]!.start_time < sorted[i - 1]!.end_time) breakRule(ctx, ['intervals'], `Intervals of ${rule.weekday} overlap`);
    }
  });
export type AvailabilityRule = z.infer<typeof AvailabilityRule>;

export const DurationType = z.enum(['Indefinite']).meta({ id: 'DurationType' });
export type DurationType = z.infer<typeof DurationType>;

export const CreateRuleSetBody = z
  .object({
    name: Text(120),
    description: z.string().trim().max(1000).optional(),
    timezone: Text(64),
    durationType: DurationType.default('Indefinite'),
    isDefault: z.boolean().default(false),
    metaData: z
      .object({
        autoAccept: z.boolean().default(true),
        bufferTime: z.number().int().min(0).max(240).default(0),
        maxBookingsPerDay: z.number().int().min(1).max(1000).default(50),
      })
      .strict()
      .default({ autoAccept: true, bufferTime: 0, maxBookingsPerDay: 50 }),
    availabilityRules: z.array(AvailabilityRule).min(1).max(7),
  })
  .strict()
  .superRefine((body, ctx) => {
    const days = body.availabilityRules.map((rule) => rule.weekday);
    if (new Set(days).size !== days.length) breakRule(ctx, ['availabilityRules'], 'One rule per weekday');
  })
  .meta({ id: 'CreateRuleSetBody' });
export type CreateRuleSetBody = z.infer<typeof CreateRuleSetBody>;

export const SessionType = z.enum(['OneToOne', 'Group']).meta({ id: 'SessionType' });
export const DeliveryMode = z.enum(['Online', 'InPerson', 'Phone']).meta({ id: 'DeliveryMode' });
export type DeliveryMode = z.infer<typeof DeliveryMode>;

export const CreateConsultationBody = z
  .object({
    title: Text(200),
    description: z.string().trim().max(10_000).default(''),
    duration: z.number().int().min(5).max(480),
    sessionType: SessionType,
    maxCapacity: z.number().int().min(1).max(500).default(1),
    deliveryMode: DeliveryMode,
    timezone: Text(64),
    language: Text(40),
    category: Text(80),
    subcategory: Tags.default([]),
    tags: Tags.default([]),
    ruleSetId: RuleSetKey,
    pricingId: PricingKey,
  })
  .strict()
  .refine((body) => body.sessionType !== 'OneToOne' || body.maxCapacity === 1, {
    message: 'A OneToOne consultation has maxCapacity 1',
    path: ['maxCapacity'],
    params: RULE,
  })
  .meta({ id: 'CreateConsultationBody' });
export type CreateConsultationBody = z.infer<typeof CreateConsultationBody>;

/** Fields that change what a booking gets: editing one sends an Approved consultation back to review. */
export const BOOKABLE_CONSULTATION_FIELDS = ['duration', 'maxCapacity', 'ruleSetId', 'pricingId'] as const;

export const UpdateConsultationBody = z
  .object({
    title: Text(200),
    description: z.string().trim().max(10_000),
    duration: z.number().int().min(5).max(480),
    category: Text(80),
    tags: Tags,
    maxCapacity: z.number().int().min(1).max(500),
    ruleSetId: RuleSetKey,
    pricingId: PricingKey,
  })
  .partial()
  .strict()
  .refine((body) => Object.keys(body).length > 0, 'Send at least one field')
  .meta({ ...AT_LEAST_ONE_FIELD, id: 'UpdateConsultationBody' });
export type UpdateConsultationBody = z.infer<typeof UpdateConsultationBody>;

/**
 * `POST /consultations/{id}/approve`: the admin names what they read, so what goes live is
 * exactly that, never an edit sent meanwhile. A Pending consultation is approved at the `version`
 * of the detail the admin read (required: 422 without it; another version is 409 `conflict`). An
 * Approved consultation with an edit of its public text waiting (`pendingRevision` of the detail)
 * is approved by naming that revision (`revisionId`) or the `version` it came with.
 */
export const ApproveConsultationBody = z
  .object({
    version: z
      .number()
      .int()
      .min(0)
      .max(Number.MAX_SAFE_INTEGER)
      .optional()
      .describe(
        'The `version` of the consultation the admin read (detail, edit or create answer). Required to approve a Pending consultation; a consultation edited since is 409 `conflict` and stays unapproved.',
      ),
    revisionId: z.string().trim().min(1).max(64).meta(NON_BLANK).optional(),
  })
  .strict()
  .meta({ id: 'ApproveConsultationBody' });
export type ApproveConsultationBody = z.infer<typeof ApproveConsultationBody>;

export const CONSULTATION_STATUSES = ['Pending', 'Approved'] as const;
export const ConsultationStatus = z.enum(CONSULTATION_STATUSES).meta({ id: 'ConsultationStatus' });
export const ConsultationVisibility = z.enum(['Hidden', 'Published']).meta({ id: 'ConsultationVisibility' });
export const ConsultationListQuery = PageQuery.extend({
  status: ConsultationStatus.optional(),
  category: z.string().trim().max(80).optional(),
}).strict();
export const KeyParams = z
  .object({
    id: RecordKey.meta({
      description:
        'The record’s id or its referenceId: either names it (a consultation con_… or MKT-CON-…, a session ses_… or SES_…, a booking bk_… or BK_…, a rule set a uuid or MKT-AVL-RST-…).',
    }),
  })
  .strict();
/** The longest range one slots query may ask for, in calendar days (`from` and `to` included). */
export const MAX_SLOT_RANGE_DAYS = 31;
export const SlotsQuery = z
  .object({ from: IsoDate, to: IsoDate })
  .strict()
  .superRefine(({ from, to }, ctx) => {
    // A date that is not one is reported on its own; the range is only measured between real days.
    if (!isCalendarDate(from) || !isCalendarDate(to)) return;
    const days = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000 + 1;
    if (days < 1) breakRule(ctx, ['to'], 'to must not be before from');
    else if (days > MAX_SLOT_RANGE_DAYS) breakRule(ctx, ['to'], `Ask for at most ${MAX_SLOT_RANGE_DAYS} days from from`);
  });

/**
 * Expired: the slot ended (plus a grace) and nobody moved the session: its bookings
 * are cancelled in full, so no hold stays open for ever.
 */
export const SESSION_STATUSES = ['Scheduled', 'In Progress', 'Completed', 'No Show', 'Expired'] as const;
export const SessionStatus = z.enum(SESSION_STATUSES).meta({ id: 'SessionStatus' });
export type SessionStatus = z.infer<typeof SessionStatus>;
export const SessionListQuery = PageQuery.extend({ status: SessionStatus.optional() }).strict();
export const StartSessionBody = z
  .object({ actualStartTime: Timestamp.optional(), notes: z.string().max(2000).optional() })
  .strict()
  .meta({ id: 'StartSessionBody' });
export const EndSessionBody = z
  .object({
    actualEndTime: Timestamp.optional(),
    notes: z.string().max(2000).optional(),
    sessionSummary: z.string().max(5000).optional(),
    nextSteps: z.string().max(2000).optional(),
  })
  .strict()
  .meta({ id: 'EndSessionBody' });
export const NoShowBody = z
  .object({
    notes: z.string().max(2000).optional(),
    attemptedContact: z.boolean().optional(),
    contactMethod: z.string().max(40).optional(),
  })
  .strict()
  .meta({ id: 'NoShowBody' });
/** The buyer's dispute of a no-show: why they say it is wrong. */
export const DisputeNoShowBody = z
  .object({ reason: Text(1000) })
  .strict()
  .meta({ id: 'DisputeNoShowBody' });
export type DisputeNoShowBody = z.infer<typeof DisputeNoShowBody>;

export const Participant = z
  .object({
    fullName: Text(120),
    email: z.string().trim().toLowerCase().pipe(z.email()).meta(EMAIL_PIPE),
    phone: z.string().regex(/^\+?[0-9(][0-9 ()-]{4,18}[0-9)]$/, 'Expected a phone number'),
  })
  .strict();

/**
 * The booked day, documented as one format (a date): a timestamp is still accepted, read as the
 * day it starts with, but clients are told of the date only (one type in every generated client).
 */
const ONE_DAY = {
  description: 'The day of the slot (YYYY-MM-DD). A timestamp is accepted too: its first 10 characters are the day.',
  override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
    delete jsonSchema.anyOf;
    Object.assign(jsonSchema, { type: 'string', format: 'date' });
  },
};

export const CreateBookingBody = z
  .object({
    SellerId: RecordKey.meta({
      description: 'The consultation’s seller: their user id (a uuid, any case) or their USR reference (MKT-USR-…).',
    }),
    consultationId: ConsultationKey,
    ruleSetId: RuleSetKey,
    date: z
      .union([IsoDate, Timestamp])
      .transform((value) => value.slice(0, 10))
      .meta(ONE_DAY),
    startTime: ClockTime,
    endTime: ClockTime,
    participants: z.array(Participant).min(1).max(50),
    /** Major units as the client saw them (at most 2 decimals), parsed to minor units (`subTotalMinor`). */
    subTotal: NonNegativeMajorAmount,
    /** Parsed to `totalAmountMinor`. */
    totalAmount: NonNegativeMajorAmount,
    currency: Currency,
    notes: z.string().max(2000).optional(),
    couponCode: z.string().trim().toUpperCase().min(1).max(40).meta(NON_BLANK).optional(),
  })
  .strict()
  .transform(withMinorNames(['subTotal', 'totalAmount']))
  .meta({ id: 'CreateBookingBody' });
export type CreateBookingBody = z.infer<typeof CreateBookingBody>;

/** PaymentPending: places taken, the wallet's answer not yet in; Failed: not paid, places given back. */
export const BOOKING_STATUSES = ['PaymentPending', 'Confirmed', 'Cancelled', 'Failed'] as const;
export const BookingStatus = z.enum(BOOKING_STATUSES).meta({ id: 'BookingStatus' });
export const BookingListQuery = PageQuery.extend({
  status: BookingStatus.optional(),
  /** `true`: only bookings whose buyer disputes a no-show (an admin's queue of disputes). */
  disputed: z.literal('true').optional(),
}).strict();
export const CancelBookingBody = z
  .object({
    bookingId: BookingKey,
    reason: z.string().trim().max(1000).optional(),
    refundRequested: z.boolean().default(true),
    notes: z.string().max(2000).optional(),
    cancellationType: z.string().trim().max(40).optional(),
    /** Major units (at most 2 decimals), parsed to minor units (`refundAmountMinor`). */
    refundAmount: NonNegativeMajorAmount.optional(),
  })
  .strict()
  .transform(withMinorNames(['refundAmount']))
  .meta({ id: 'CancelBookingBody' });
export type CancelBookingBody = z.infer<typeof CancelBookingBody>;

export const PricingStrategy = z.enum(['Fixed']).meta({ id: 'PricingStrategy' });
export type PricingStrategy = z.infer<typeof PricingStrategy>;
export const DiscountType = z.enum(['Percentage', 'Fixed']).meta({ id: 'DiscountType' });
export const VisibilityRuleType = z.enum(['user_type', 'location']).meta({ id: 'VisibilityRuleType' });
export const VisibilityRuleAction = z.enum(['show', 'hide']).meta({ id: 'VisibilityRuleAction' });

export const CreatePricingBody = z
  .object({
    basePrice: NonNegativeMajorAmount,
    currency: Currency,
    pricingStrategy: PricingStrategy.default('Fixed'),
    comparePrice: NonNegativeMajorAmount.optional(),
    isOnSale: z.boolean().default(false),
    isActive: z.boolean().default(true),
  })
  .strict()
  .refine((body) => body.comparePrice === undefined || body.comparePrice >= body.basePrice, {
    message: 'comparePrice must be at least basePrice',
    path: ['comparePrice'],
    params: RULE,
  })
  .transform(withMinorNames(['basePrice', 'comparePrice']))
  .meta({ id: 'CreatePricingBody' });
export type CreatePricingBody = z.infer<typeof CreatePricingBody>;

export const CreateDiscountBody = z
  .object({
    name: Text(120),
    description: z.string().trim().max(1000).default(''),
    discountType: DiscountType,
    discountValue: z.number().positive(),
    validFrom: Timestamp,
    validTo: Timestamp,
    // Checked as sent, in either case, before it is upper-cased: the document's pattern is what
    // is accepted (`launch10` is), and no letter outside A-Z can become one by upper-casing.
    couponCode: z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9_-]{3,40}$/, 'A coupon code is 3 to 40 letters, digits, dashes or underscores')
      .toUpperCase()
      .describe('3 to 40 letters (either case), digits, dashes or underscores; stored and answered upper-cased (launch10 is LAUNCH10)'),
    maxUses: z.number().int().min(1).max(1_000_000),
    maxUsesPerBuyer: z
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .default(1)
      .describe('How many uses one buyer may hold at once (a cancelled booking gives its use back); default 1'),
    isActive: z.boolean().default(true),
  })
  .strict()
  .superRefine((body, ctx) => {
    if (Date.parse(body.validFrom) >= Date.parse(body.validTo)) breakRule(ctx, ['validTo'], 'validTo must be after validFrom');
    if (body.discountType === 'Percentage' && body.discountValue > 100) breakRule(ctx, ['discountValue'], 'A percentage is at most 100');
    if (body.discountType === 'Fixed' && parseMoney(body.discountValue) === null) {
      breakRule(ctx, ['discountValue'], 'A fixed discount is an amount with at most 2 decimals');
    }
  })
  // A Fixed discount is money: parsed to minor units and named `discountValueMinor`; a
  // percentage is not money and keeps its name.
  .transform((body) =>
    body.discountType === 'Fixed'
      ? withMinorNames(['discountValue'])({ ...body, discountType: 'Fixed' as const, discountValue: parseMoney(body.discountValue)! })
      : { ...body, discountType: 'Percentage' as const },
  )
  .meta({ id: 'CreateDiscountBody' });
export type CreateDiscountBody = z.infer<typeof CreateDiscountBody>;

export const ValidateCouponBody = z
  .object({
    couponCode: z.string().trim().toUpperCase().min(1).max(40).meta(NON_BLANK),
    consultationId: ConsultationKey,
    userId: UserKey.optional(),
  })
  .strict()
  .meta({ id: 'ValidateCouponBody' });

export const VisibilityRule = z
  .object({
    type: VisibilityRuleType,
    condition: z.string().trim().min(1).max(200).meta(NON_BLANK),
    action: VisibilityRuleAction,
    priority: z.number().int().min(0).max(10_000),
  })
  .strict();
export const CreateVisibilityRuleSetBody = z
  .object({
    name: Text(120),
    description: z.string().trim().max(1000).default(''),
    isDefault: z.boolean().default(false),
    isActive: z.boolean().default(true),
    validFrom: Timestamp,
    validTo: Timestamp,
    visibilityRules: z.array(VisibilityRule).min(1).max(50),
  })
  .strict()
  .refine((body) => Date.parse(body.validFrom) < Date.parse(body.validTo), {
    message: 'validTo must be after validFrom',
    path: ['validTo'],
    params: RULE,
  })
  .meta({ id: 'CreateVisibilityRuleSetBody' });
export type CreateVisibilityRuleSetBody = z.infer<typeof CreateVisibilityRuleSetBody>;

export const VisibilityStatusBody = z
  .object({
    consultationIds: z.array(ConsultationKey).min(1).max(100),
    userId: UserKey.optional(),
    context: z
      .object({ userType: z.string().trim().max(40).optional(), location: z.string().trim().max(40).optional() })
      .strict()
      .default({}),
  })
  .strict()
  .meta({ id: 'VisibilityStatusBody' });
export type VisibilityStatusBody = z.infer<typeof VisibilityStatusBody>;
