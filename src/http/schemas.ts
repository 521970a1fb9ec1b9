import { z } from "@hono/zod-openapi";
import { PLACEMENT_RULES } from "../domain/blend";
import { isPublicLine, isPublicParagraph, PUBLIC_LINE_RULE, PUBLIC_PARAGRAPH_RULE } from "../domain/public-text";
import { typePhone } from "../domain/sms-policy";
import { PHONE_VERIFICATION_STATUSES } from "../domain/phone-codes";
import { LANGUAGES } from "../domain/languages";
import { MAX_ROUTE_LEGS } from "../domain/visit-route";

// Request and record schemas shared across areas. Bodies are strict: an unknown field is a
// VALIDATION_ERROR, so nothing can be set through a body that does not name it.

/** A language of the catalogue (src/domain/languages, docs/languages.md). */
export const Language = z.enum(LANGUAGES).openapi({ description: `A language of the catalogue: ${LANGUAGES.join(", ")}`, example: "fr" });

/**
 * A name or title people see (CONTRACT §10): trimmed, 1 to `max` characters, one line without
 * control characters, bidi overrides or lone surrogates (src/domain/public-text.ts).
 */
export const PublicLine = (max: number) => z.string().trim().min(1).max(max).refine(isPublicLine, PUBLIC_LINE_RULE);
/** A description or note people see: up to `max` characters; line breaks and tabs allowed. */
export const PublicParagraph = (max: number) => z.string().max(max).refine(isPublicParagraph, PUBLIC_PARAGRAPH_RULE);

/** The one phone rule of every route that takes a customer's phone (SMS needs E.164). */
export const E164_PHONE = /^\+[1-9][0-9]{6,14}$/;
export const CustomerPhone = z
  .string()
  .regex(E164_PHONE, "an E.164 phone number: + then country code and number, no spaces, e.g. +33612345678")
  // Premium, shared-cost and satellite ranges are what SMS pumping texts (docs/limits.md).
  .superRefine((v, ctx) => {
    const verdict = typePhone(v);
    if (!verdict.ok) ctx.addIssue({ code: "custom", message: verdict.reason });
  })
  .openapi({
    example: "+33612345678",
    description: "A personal mobile number in E.164 (premium, shared-cost and satellite ranges are refused)",
  });
/** What a join's `phone` must be, for the routes' descriptions (docs/limits.md). */
export const PHONE_RULES =
  "A `phone` must be a personal mobile number in a country the organization texts (else 400 VALIDATION_ERROR naming `phone`); " +
  "SMS-enabled joins are capped per number, per address and per widget key each UTC day (429 with `details.field: phone` and " +
  "`details.cap`): join again without a phone. See GET /v1/organizations/{organizationId}/sms-policy. Where the organization " +
  "requires it (`requirePhoneCode`), the number's first SMS is a 6-digit code and `phoneVerification.status` is `pending`: " +
  "nothing else is texted to it until the code comes back (POST /v1/tickets/{ticketId}/phone-verification).";
export const Email = z
  .email()
  .max(254)
  .transform((v) => v.toLowerCase());
export const OrganizationType = z.enum(["retail", "healthcare", "banking", "government", "other"]);
export const RoleSchema = z.enum(["owner", "admin", "manager", "operator"]);

export const UserRecord = z
  .object({
    id: z.string(),
    email: z.string(),
    firstName: z.string(),
    lastName: z.string(),
    role: z.enum(["user", "admin"]),
    accountType: z.enum(["business", "customer"]),
    language: Language,
    defaultOrganizationId: z
      .string()
      .nullable()
      .openapi({ description: "Used when a request names no organization and you have several memberships" }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("User");

export const InvitationRecord = z
  .object({
    id: z.string().openapi({ description: "Also the token of the invitation link; accepting needs the invitee's session" }),
    organizationId: z.string(),
    organizationName: z.string().optional(),
    email: z.string(),
    role: z.enum(["admin", "manager", "operator"]),
    locationIds: z
      .array(z.string())
      .nullable()
      .openapi({ description: "The locations the membership is limited to once accepted; null = the whole organization" }),
    status: z.enum(["pending", "accepted", "declined", "revoked", "expired"]),
    expiresAt: z.string(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("Invitation");

export const SessionRecord = z.object({ token: z.string(), expiresAt: z.string() }).openapi("Session");

export const MembershipRecord = z
  .object({
    organizationId: z.string(),
    role: RoleSchema,
    locationIds: z
      .array(z.string())
      .nullable()
      .openapi({ description: "The locations this membership is limited to (issue 31); null = the whole organization" }),
  })
  .openapi("Membership");

/** The likely wait (docs/wait-estimate.md): `estimatedWaitMinutes` lies within it; both 0 when nobody is ahead. */
export const WaitRangeSchema = z.object({ low: z.number().int(), high: z.number().int() }).openapi("WaitRange", {
  example: { low: 8, high: 15 },
  description: "Minutes, from the faster to the slower quarter of recent services; low ≥ 1 while anyone is ahead",
});

/** Why a waiting ticket stands where it does (docs/blend.md). */
export const PlacementSchema = z
  .object({
    rule: z.enum(PLACEMENT_RULES),
    reason: z.string().openapi({ example: "Appointment at 10:30: ahead of walk-ins since 10:30" }),
    since: z.string().openapi({ description: "When this placement began to apply" }),
  })
  .openapi("Placement");

/** One operator's minutes per visitor, used until the queue has call history. */
export const DefaultServiceMinutes = z
  .number()
  .int()
  .min(1)
  .max(240)
  .describe("Minutes one operator usually spends per visitor; the estimate uses it until the queue has 3 timed services (default 5)");

/** The counter a ticket is called to, as the display board shows it. */
export const CounterLabel = PublicLine(40);

/** What became of the caller's previous call, sent with call-next (docs/floor.md). */
export const PreviousOutcomeField = z.enum(["served", "no_show"]).openapi({
  description:
    "What became of the caller's previous call there that was never started: `served` completes it, `no_show` marks it " +
    "absent (skipped, reason `no_show`), before the next call. Without it the previous call stays as it is and the answer's " +
    "`meta.previousCallOpen` names it.",
});

/** The answer's meta of a call-next: the caller's previous call, left open or closed by `previousOutcome`. */
export const PreviousCallMeta = z
  .object({
    previousCallOpen: z
      .object({ ticketId: z.string(), displayCode: z.string(), calledAt: z.string() })
      .nullable()
      .openapi({ description: "The caller's latest call there never started (no previousOutcome sent); null when none" }),
    previousCallsClosed: z
      .array(z.object({ ticketId: z.string(), displayCode: z.string(), status: z.enum(["served", "skipped"]) }))
      .openapi({ description: "The calls previousOutcome closed (normally one); [] when none" }),
  })
  .openapi("PreviousCallMeta");

// ---- visits (docs/visits.md) -----------------------------------------------------------------

/** A text answer is shown to staff and on receipts: the §10 paragraph rules apply (issue 44). */
const IntakeValueSchema = z.union([PublicParagraph(2000), z.number(), z.boolean()]);

/** The visitor's answers at a join, checked against the service's intake questions (400 names `intake.<key>`). */
export const IntakeAnswersBody = z
  .record(z.string().max(64), IntakeValueSchema.nullable())
  .refine((r) => Object.keys(r).length <= 50, "at most 50 answers")
  .openapi("IntakeAnswers", {
    description:
      "Answers to the service's intake questions (GET /v1/services/{serviceId}/intake), by question key. Each wrong or missing " +
      "`at_join` answer is a 400 VALIDATION_ERROR naming `intake.<key>` (all of them in `details.issues`).",
    example: { reason: "passport", account: "FR76-1234" },
  });

/** A ticket's answers as staff and its owner see them; {} when none. */
export const IntakeAnswersRecord = z.record(z.string(), IntakeValueSchema).openapi({
  description: "The ticket's intake answers by question key (docs/visits.md); {} when none",
});

/** A ticket label (docs/visits.md): lowercase, so a filter matches what staff meant. */
export const TicketLabel = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z0-9][a-z0-9_-]{0,31}$/, "lowercase letters, digits, _ and -, at most 32, starting with a letter or digit")
  .openapi({ example: "interpreter", description: "Letters a–z, digits, `_` and `-`; at most 32; sent in any case, kept in lowercase" });

/** What a join's answer says of the number it gave (docs/limits.md, one-time codes). */
export const PhoneVerificationSchema = z
  .object({
    status: z.enum(PHONE_VERIFICATION_STATUSES).openapi({
      description:
        "`none`: no phone, or the organization asks no code (nothing to do); `pending`: a 6-digit code was texted, give it back " +
        "with POST /v1/tickets/{ticketId}/phone-verification before `expiresAt` (no other SMS until then); `expired`: too late or " +
        "5 wrong codes, ask for a new one (…/phone-verification/resend); `verified`: the ticket's SMS go out",
      example: "pending",
    }),
    expiresAt: z
      .string()
      .nullable()
      .openapi({ description: "When the code stops working; null unless pending", example: "2026-03-20T10:40:00.000Z" }),
  })
  .openapi("PhoneVerification");

/** How a ticket with a phone hears of its turn (docs/notifications.md): SMS (default) or WhatsApp. */
export const NotifyBy = z.enum(["sms", "whatsapp"]).openapi({
  description:
    "How the ticket's messages reach `phone`: `sms` (default) or `whatsapp` (the organization's WhatsApp number; 400 naming " +
    "`notifyBy` when it has none, `phone` when none is given). Both spend the same SMS caps and allowance",
  // The demo organization has no WhatsApp number: the documented join must work as written.
  example: "sms",
});
/** docs/visits.md, several services: the services of one visit, in order, the joined queue's first. */
export const RouteBody = z
  .array(z.string().min(1).max(64))
  .min(1)
  .max(MAX_ROUTE_LEGS)
  .openapi("VisitRoute", {
    description:
      `Several services in one visit (docs/visits.md): up to ${MAX_ROUTE_LEGS} service ids in order, the first being the joined queue's ` +
      "service; each needs a queue at a location of that service. Completing a leg puts the same visitor (code, token) in the next " +
      "service's queue. A wrong entry is a 400 VALIDATION_ERROR naming `route.<i>`.",
    example: ["svc_d3m0s3rv1c3000000000"],
  });
