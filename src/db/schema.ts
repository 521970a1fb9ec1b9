import { sql } from "drizzle-orm";
import { LANGUAGES, type Language } from "../domain/languages";
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex, type AnySQLiteColumn } from "drizzle-orm/sqlite-core";
import { DEFAULT_MAX_DEFER_MINUTES, DEFAULT_MAX_DEFERS, DEFAULT_NO_SHOW_MINUTES } from "../domain/tickets";
import { CHANNEL_COLUMNS } from "../domain/analytics";
import type { OpeningHours } from "../domain/opening-hours";
import type { BookingSettings } from "../domain/slots";
import type { BlendPolicy } from "../domain/blend";

// Times are stored as epoch milliseconds (integer) and turned into ISO strings at the edge.

export const users = sqliteTable(
  "users",
  {
    id: text("id").primaryKey(),
    email: text("email").notNull(),
    passwordHash: text("password_hash").notNull(),
    firstName: text("first_name").notNull(),
    lastName: text("last_name").notNull(),
    accountType: text("account_type", { enum: ["business", "customer"] }).notNull(),
    role: text("role", { enum: ["user", "admin"] })
      .notNull()
      .default("user"),
    language: text("language", { enum: LANGUAGES }).notNull().default("en"),
    smsNotifications: integer("sms_notifications", { mode: "boolean" }).notNull().default(true),
    ticketReminders: integer("ticket_reminders", { mode: "boolean" }).notNull().default(true),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    /** Where a request that names no organization goes when the user has several (migration 0017). */
    defaultOrganizationId: text("default_organization_id"),
  },
  (t) => [uniqueIndex("users_email_unique").on(t.email)],
);

export const sessions = sqliteTable(
  "sessions",
  {
    tokenHash: text("token_hash").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    createdAt: integer("created_at").notNull(),
    lastSeenAt: integer("last_seen_at").notNull(),
    /** Idle expiry: slides forward on use, never past absoluteExpiresAt. */
    expiresAt: integer("expires_at").notNull(),
    absoluteExpiresAt: integer("absolute_expires_at").notNull(),
    revokedAt: integer("revoked_at"),
  },
  (t) => [index("sessions_user_idx").on(t.userId)],
);

export const organizations = sqliteTable(
  "organizations",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    slug: text("slug").notNull(),
    type: text("type", { enum: ["retail", "healthcare", "banking", "government", "other"] })
      .notNull()
      .default("other"),
    description: text("description"),
    legalName: text("legal_name"),
    siret: text("siret"),
    vatNumber: text("vat_number"),
    website: text("website"),
    billingEmail: text("billing_email"),
    availabilityRadiusKm: real("availability_radius_km"),
    defaultLanguage: text("default_language", { enum: LANGUAGES }).notNull().default("en"),
    logoUrl: text("logo_url"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    /** Days after which visitors' personal data is anonymised (docs/retention.md). */
    dataRetentionDays: integer("data_retention_days").notNull().default(90),
    /** The languages the business offers its visitors (docs/languages.md, migration 0041); null = the whole catalogue. */
    languages: text("languages", { mode: "json" }).$type<Language[]>(),
    /**
     * Set on an organization's test-mode twin only (docs/test-mode.md, migration 0043): the live
     * organization it mirrors. A twin is an organization like any other, so everything scoped by
     * organization keeps live and test apart without another check.
     */
    liveOrganizationId: text("live_organization_id").references((): AnySQLiteColumn => organizations.id, { onDelete: "cascade" }),
    /** A twin's catalogue was last copied from its live organization then. */
    catalogueCopiedAt: integer("catalogue_copied_at"),
  },
  (t) => [uniqueIndex("organizations_slug_unique").on(t.slug), uniqueIndex("organizations_live_unique").on(t.liveOrganizationId)],
);

export const members = sqliteTable(
  "members",
  {
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    role: text("role", { enum: ["owner", "admin", "manager", "operator"] }).notNull(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    /** The locations this member works at (migration 0024); null = the whole organization. */
    locationIds: text("location_ids", { mode: "json" }).$type<string[]>(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.userId] }), index("members_user_idx").on(t.userId)],
);

/**
 * An offer of membership (migration 0017): membership starts only when the invitee accepts
 * with their own session. The id doubles as the link token (accepting also needs the e-mail).
 */
export const invitations = sqliteTable(
  "invitations",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    email: text("email").notNull(),
    role: text("role", { enum: ["admin", "manager", "operator"] }).notNull(),
    status: text("status", { enum: ["pending", "accepted", "declined", "revoked"] })
      .notNull()
      .default("pending"),
    invitedBy: text("invited_by"),
    expiresAt: integer("expires_at").notNull(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    /** The membership's locations once accepted (migration 0024); null = the whole organization. */
    locationIds: text("location_ids", { mode: "json" }).$type<string[]>(),
  },
  (t) => [
    uniqueIndex("invitations_pending_unique")
      .on(t.organizationId, t.email)
      .where(sql`status = 'pending'`),
    index("invitations_email_idx").on(t.email, t.status),
  ],
);

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    /** The first characters after `qk_live_`: the lookup handle, not a secret on its own. */
    lookupPrefix: text("lookup_prefix").notNull(),
    keyHash: text("key_hash").notNull(),
    last4: text("last4").notNull(),
    permissions: text("permissions", { mode: "json" }).$type<string[]>().notNull(),
    createdById: text("created_by_id"),
    createdAt: integer("created_at").notNull(),
    lastUsedAt: integer("last_used_at"),
    revokedAt: integer("revoked_at"),
    /** A widget key locked to these origins (https, on verified domains); null = any origin. */
    allowedOrigins: text("allowed_origins", { mode: "json" }).$type<string[]>(),
    /** The key ends with a MAC (src/lib/credentials.ts); false for keys minted before (legacy, to rotate). */
    signed: integer("signed", { mode: "boolean" }).notNull().default(false),
    /** The API version this key answers in (src/http/versioning.ts); null = the first, 2026-11-01 (migration 0025). */
    apiVersion: text("api_version"),
  },
  (t) => [uniqueIndex("api_keys_lookup_unique").on(t.lookupPrefix), index("api_keys_org_idx").on(t.organizationId)],
);

/** Plans, limits and quotas: the plan name here, its figures in src/domain/plans.ts. */
export const subscriptions = sqliteTable(
  "subscriptions",
  {
    organizationId: text("organization_id")
      .primaryKey()
      .references(() => organizations.id, { onDelete: "cascade" }),
    plan: text("plan", { enum: ["starter", "pro", "enterprise"] })
      .notNull()
      .default("starter"),
    billingInterval: text("billing_interval", { enum: ["monthly", "yearly"] })
      .notNull()
      .default("monthly"),
    status: text("status", { enum: ["active", "incomplete", "past_due", "cancelled"] })
      .notNull()
      .default("active"),
    currency: text("currency", { enum: ["EUR", "USD", "XOF"] })
      .notNull()
      .default("EUR"),
    currentPeriodStart: integer("current_period_start").notNull(),
    currentPeriodEnd: integer("current_period_end").notNull(),
    cancelAtPeriodEnd: integer("cancel_at_period_end", { mode: "boolean" }).notNull().default(false),
    /** A rate tier given explicitly (e.g. "starter"), overriding the plan's default tier. */
    rateTierOverride: text("rate_tier_override", { enum: ["free", "starter", "business", "enterprise"] }),
    /** Enterprise custom limits; null means the tier default. */
    customRatePerMinute: integer("custom_rate_per_minute"),
    customRatePerDay: integer("custom_rate_per_day"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    /** Who collects the payments of a paid plan (null on starter). */
    provider: text("provider", { enum: ["stripe", "fedapay", "sandbox"] }),
    /** Stripe's subscription id (sub_…); null for FedaPay, which has no recurring payments. */
    providerSubscriptionId: text("provider_subscription_id"),
    /** A lower plan that takes over at currentPeriodEnd (cancel and downgrade). */
    scheduledPlan: text("scheduled_plan", { enum: ["starter", "pro", "enterprise"] }),
    /** past_due only: the paid plan is kept until then, then the organization falls back to starter. */
    graceUntil: integer("grace_until"),
    /** Creation time of the newest provider event applied: an older one never undoes it. */
    lastEventAt: integer("last_event_at"),
    cancelReason: text("cancel_reason"),
    /** Sandbox only: the "card" given at checkout declines renewals (to try a failed renewal). */
    sandboxRenewalsFail: integer("sandbox_renewals_fail", { mode: "boolean" }).notNull().default(false),
  },
  (t) => [index("subscriptions_period_end_idx").on(t.currentPeriodEnd)],
);

/** Exact monthly counters: incremented with a conditional UPDATE (used < limit). */
export const usageCounters = sqliteTable(
  "usage_counters",
  {
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    period: text("period").notNull(),
    metric: text("metric", { enum: ["tickets", "api_calls", "sms", "webhook_deliveries"] }).notNull(),
    used: integer("used").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.period, t.metric] })],
);

export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    scope: text("scope").notNull(),
    key: text("key").notNull(),
    requestHash: text("request_hash").notNull(),
    state: text("state", { enum: ["in_progress", "done"] }).notNull(),
    responseStatus: integer("response_status"),
    responseBody: text("response_body"),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.scope, t.key] }), index("idempotency_expires_idx").on(t.expiresAt)],
);

export const serviceTypes = sqliteTable(
  "service_types",
  {
    id: text("id").primaryKey(),
    organizationType: text("organization_type", { enum: ["retail", "healthcare", "banking", "government", "other"] }).notNull(),
    nameFr: text("name_fr").notNull(),
    nameEn: text("name_en").notNull(),
  },
  (t) => [index("service_types_org_type_idx").on(t.organizationType)],
);

export const locations = sqliteTable(
  "locations",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    address: text("address").notNull(),
    latitude: real("latitude").notNull(),
    longitude: real("longitude").notNull(),
    timezone: text("timezone").notNull().default("UTC"),
    phone: text("phone"),
    email: text("email"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    /** Weekly opening hours in the location's timezone (docs/appointments.md); null: open all day. */
    openingHours: text("opening_hours", { mode: "json" }).$type<OpeningHours>(),
    /** The language its visitors get when they chose none (docs/languages.md); null: the organization's. */
    defaultLanguage: text("default_language", { enum: LANGUAGES }),
  },
  (t) => [
    index("locations_org_idx").on(t.organizationId),
    // Nearby search: a latitude band from this index, then a longitude filter and haversine.
    index("locations_geo_idx").on(t.latitude, t.longitude),
  ],
);

export const services = sqliteTable(
  "services",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    description: text("description"),
    serviceTypeId: text("service_type_id")
      .notNull()
      .references(() => serviceTypes.id),
    isVirtual: integer("is_virtual", { mode: "boolean" }).notNull().default(false),
    maxRemoteJoinRadiusKm: real("max_remote_join_radius_km"),
    status: text("status", { enum: ["active", "inactive", "pending", "rejected"] })
      .notNull()
      .default("active"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    /** Booking settings (docs/appointments.md); null: the service takes no appointments. */
    booking: text("booking", { mode: "json" }).$type<BookingSettings>(),
    /** docs/visits.md, several services: where a visitor coming from an earlier leg enters this service's line. */
    routeEntry: text("route_entry", { enum: ["front", "original_time"] })
      .notNull()
      .default("original_time"),
  },
  (t) => [index("services_org_idx").on(t.organizationId)],
);

export const serviceLocations = sqliteTable(
  "service_locations",
  {
    serviceId: text("service_id")
      .notNull()
      .references(() => services.id, { onDelete: "cascade" }),
    locationId: text("location_id")
      .notNull()
      .references(() => locations.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.serviceId, t.locationId] }), index("service_locations_location_idx").on(t.locationId)],
);

/**
 * The catalog record of a queue. Its live state (status, counts, tickets) belongs to the
 * queue's QueueRoom; `status` here is the room's projection, kept for listings and filters.
 */
export const queues = sqliteTable(
  "queues",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    serviceId: text("service_id")
      .notNull()
      .references(() => services.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    description: text("description"),
    maxCapacity: integer("max_capacity"),
    /** Mirror of the room's own value, for a room that learns its configuration from this row. */
    noShowTimeoutMinutes: integer("no_show_timeout_minutes").notNull().default(DEFAULT_NO_SHOW_MINUTES),
    /** Mirror of the room's own value: one operator's minutes per visitor before there is history. */
    defaultServiceMinutes: integer("default_service_minutes").notNull().default(5),
    letter: text("letter").notNull(),
    status: text("status", { enum: ["active", "paused", "closed"] })
      .notNull()
      .default("active"),
    archivedAt: integer("archived_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    /** Version of the rules its room must hold (docs/room-rules.md): bumped by every change of them. */
    rulesVersion: integer("rules_version").notNull().default(0),
    /** How many intake questions its service asks (docs/visits.md): 0 = a join reads none. */
    intakeQuestions: integer("intake_questions").notNull().default(0),
    /** The queue's blend policy (docs/blend.md), JSON; null: the defaults. */
    blendPolicy: text("blend_policy", { mode: "json" }).$type<BlendPolicy>(),
    /** The wait the branch aims for (docs/floor.md): the floor turns a line amber, then red, and alerts; null: none. */
    targetWaitMinutes: integer("target_wait_minutes"),
    /** A later turn on request (docs/visits.md, defer): how far ahead, and how many times per ticket (0: never). */
    maxDeferMinutes: integer("max_defer_minutes").notNull().default(DEFAULT_MAX_DEFER_MINUTES),
    maxDefers: integer("max_defers").notNull().default(DEFAULT_MAX_DEFERS),
    /** The word a customer texts to the organization's number to join (docs/conversations.md); null: none. */
    smsKeyword: text("sms_keyword"),
  },
  (t) => [
    index("queues_org_idx").on(t.organizationId),
    uniqueIndex("queues_service_letter_unique").on(t.serviceId, t.letter),
    uniqueIndex("queues_org_sms_keyword_unique").on(t.organizationId, t.smsKeyword),
  ],
);

/** Read model of tickets for history, listings and analytics; written only by room outboxes. */
export const tickets = sqliteTable(
  "tickets",
  {
    id: text("id").primaryKey(),
    queueId: text("queue_id").notNull(),
    serviceId: text("service_id").notNull(),
    organizationId: text("organization_id").notNull(),
    userId: text("user_id").notNull(),
    number: integer("number").notNull(),
    displayCode: text("display_code").notNull(),
    status: text("status").notNull(),
    partySize: integer("party_size").notNull(),
    isPriority: integer("is_priority", { mode: "boolean" }).notNull(),
    isGhostMode: integer("is_ghost_mode", { mode: "boolean" }).notNull(),
    source: text("source").notNull(),
    visitorName: text("visitor_name"),
    assignedToId: text("assigned_to_id"),
    calledAt: integer("called_at"),
    servingAt: integer("serving_at"),
    servedAt: integer("served_at"),
    presentAt: integer("present_at"),
    skipReason: text("skip_reason"),
    recoveredFromId: text("recovered_from_id"),
    transferredToId: text("transferred_to_id"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    /** The room's change counter for this ticket: an upsert never goes backwards. */
    version: integer("version").notNull(),
    /** The wait (minutes) the join answered, kept for estimate accuracy; null when none was given. */
    firstEstimateMinutes: real("first_estimate_minutes"),
    /** The completion's outcome code (one of the service's outcomes) and the operator's note (docs/desks.md). */
    outcome: text("outcome"),
    note: text("note"),
    /** When the ticket was set aside (held); null unless held. */
    heldAt: integer("held_at"),
    /** Places its owner stepped back (once); null until then. */
    steppedBackPlaces: integer("stepped_back_places"),
    /** docs/visits.md, defer: the latest later turn asked (not called before it), and how many were asked. */
    deferredUntil: integer("deferred_until"),
    deferCount: integer("defer_count").notNull().default(0),
    /** The latest call's counter label, desk and recalls (docs/desks.md), kept once the room lets the ticket go. */
    counter: text("counter"),
    deskId: text("desk_id"),
    recallCount: integer("recall_count").notNull().default(0),
    recalledAt: integer("recalled_at"),
    /** The phone given at the join (E.164, bare), for matching a customer's SMS (issue 30). */
    phone: text("phone"),
    /** Intake answers (docs/visits.md), JSON: the open ones, and the personal ones retention erases. */
    intake: text("intake"),
    intakePersonal: text("intake_personal"),
    /** Staff's labels (docs/visits.md), a JSON array; null when none. */
    labels: text("labels"),
    /** docs/blend.md: walk_in or appointment, and the appointment's start (null for a walk-in). */
    kind: text("kind", { enum: ["walk_in", "appointment"] })
      .notNull()
      .default("walk_in"),
    appointmentAt: integer("appointment_at"),
    /** docs/visits.md, several services: the first leg's ticket id (null: a one-service visit), this leg (0-based), how many. */
    visitId: text("visit_id"),
    legIndex: integer("leg_index"),
    legCount: integer("leg_count"),
  },
  (t) => [
    index("tickets_visit_idx")
      .on(t.visitId)
      .where(sql`visit_id IS NOT NULL`),
    index("tickets_phone_created_idx")
      .on(t.phone, t.createdAt)
      .where(sql`phone IS NOT NULL`),
    index("tickets_queue_status_idx").on(t.queueId, t.status),
    index("tickets_org_created_idx").on(t.organizationId, t.createdAt),
    index("tickets_user_idx").on(t.userId),
    // Only the rows still holding a visitor's name: what the anonymisation sweep has left to do.
    index("tickets_named_org_created_idx")
      .on(t.organizationId, t.createdAt)
      .where(sql`visitor_name IS NOT NULL`),
    // Only the rows still holding personal intake answers (docs/visits.md).
    index("tickets_intake_personal_org_created_idx")
      .on(t.organizationId, t.createdAt)
      .where(sql`intake_personal IS NOT NULL`),
    // Only the rows still holding a phone (docs/retention.md).
    index("tickets_phone_org_created_idx")
      .on(t.organizationId, t.createdAt)
      .where(sql`phone IS NOT NULL`),
  ],
);

/** Each room's earliest deadline, so the cron sweep wakes only rooms with work due. */
export const roomDeadlines = sqliteTable(
  "room_deadlines",
  {
    queueId: text("queue_id").primaryKey(),
    organizationId: text("organization_id").notNull(),
    dueAt: integer("due_at").notNull(),
  },
  (t) => [index("room_deadlines_due_idx").on(t.dueAt)],
);

/**
 * A QR code's token: the opaque string printed in the code. Scans look it up by `token`;
 * `id` addresses the record in the management routes. Revoked tokens stay, so a scan of an
 * old print can be told apart from an unknown code.
 */
export const qrTokens = sqliteTable(
  "qr_tokens",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    purpose: text("purpose", {
      enum: ["service_checkin", "queue_join", "operator_access", "verification", "single_use_invite"],
    }).notNull(),
    serviceId: text("service_id").references(() => services.id, { onDelete: "cascade" }),
    queueId: text("queue_id").references(() => queues.id, { onDelete: "cascade" }),
    token: text("token").notNull(),
    expiresAt: integer("expires_at"),
    usedAt: integer("used_at"),
    usedByUserId: text("used_by_user_id"),
    createdById: text("created_by_id"),
    createdAt: integer("created_at").notNull(),
    revokedAt: integer("revoked_at"),
  },
  (t) => [uniqueIndex("qr_tokens_token_unique").on(t.token), index("qr_tokens_org_created_idx").on(t.organizationId, t.createdAt)],
);

/** An NFC tag placed at a location; a scan joins `queueId`. `nfcId` is the physical identifier. */
export const nfcTags = sqliteTable(
  "nfc_tags",
  {
    id: text("id").primaryKey(),
    nfcId: text("nfc_id").notNull(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    queueId: text("queue_id")
      .notNull()
      .references(() => queues.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["physical", "virtual", "mobile_wallet"] })
      .notNull()
      .default("physical"),
    locationName: text("location_name").notNull(),
    latitude: real("latitude").notNull(),
    longitude: real("longitude").notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    scanCount: integer("scan_count").notNull().default(0),
    lastScannedAt: integer("last_scanned_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("nfc_tags_nfc_id_unique").on(t.nfcId),
    index("nfc_tags_org_idx").on(t.organizationId),
    index("nfc_tags_queue_idx").on(t.queueId),
  ],
);

/** The devices that scanned a tag, one row each, so `uniqueDevices` is an exact count. */
export const nfcTagDevices = sqliteTable(
  "nfc_tag_devices",
  {
    tagId: text("tag_id")
      .notNull()
      .references(() => nfcTags.id, { onDelete: "cascade" }),
    deviceHash: text("device_hash").notNull(),
    firstSeenAt: integer("first_seen_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tagId, t.deviceHash] })],
);

/**
 * Team calendar. Times are UTC instants; a recurring event repeats its local wall-clock time
 * in its timezone (the location's, else the organization's first location's, else UTC), and
 * is expanded into occurrences when read (src/domain/recurrence.ts).
 */
export const calendarEvents = sqliteTable(
  "calendar_events",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    title: text("title").notNull(),
    description: text("description"),
    startAt: integer("start_at").notNull(),
    endAt: integer("end_at").notNull(),
    eventType: text("event_type", { enum: ["shift", "break", "closure", "event", "unavailability", "appointment"] }).notNull(),
    // Cascade, not set null: a service closure whose service is gone must not turn into an
    // organization-wide closure.
    serviceId: text("service_id").references(() => services.id, { onDelete: "cascade" }),
    // Set null: the event survives its location and falls back to the organization's timezone.
    locationId: text("location_id").references(() => locations.id, { onDelete: "set null" }),
    attendees: text("attendees", { mode: "json" }).$type<string[]>().notNull(),
    color: text("color"),
    recurrencePattern: text("recurrence_pattern", { enum: ["daily", "weekly", "monthly"] }),
    /** The last instant an occurrence may start (inclusive); null repeats for ever. */
    recurrenceEndAt: integer("recurrence_end_at"),
    createdById: text("created_by_id").references(() => users.id, { onDelete: "set null" }),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    // Also serves lookups by organization alone (leftmost prefix).
    index("calendar_events_org_start_idx").on(t.organizationId, t.startAt),
    // The minute sweep's appointment reminders (migration 0019).
    index("calendar_events_type_start_idx").on(t.eventType, t.startAt),
  ],
);

/**
 * Accepted QR and NFC scans, by user: the proof a remote join needs to confirm arrival by
 * `qr_scan`/`nfc_scan` (a scan of the queue's code or tag in the last 10 minutes), and the
 * device details an NFC scan reports.
 */
export const entryScans = sqliteTable(
  "entry_scans",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    channel: text("channel", { enum: ["qr", "nfc"] }).notNull(),
    /** The QR token's or NFC tag's record id. */
    sourceId: text("source_id").notNull(),
    serviceId: text("service_id"),
    queueId: text("queue_id"),
    phoneModel: text("phone_model"),
    osVersion: text("os_version"),
    scannedAt: integer("scanned_at").notNull(),
  },
  (t) => [index("entry_scans_user_at_idx").on(t.userId, t.scannedAt)],
);

/** Remote joins that expired (never arrived), per user across queues: the penalty's evidence. */
export const remoteJoinExpiries = sqliteTable(
  "remote_join_expiries",
  {
    ticketId: text("ticket_id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    queueId: text("queue_id").notNull(),
    expiredAt: integer("expired_at").notNull(),
  },
  (t) => [
    index("remote_join_expiries_user_at_idx").on(t.userId, t.expiredAt),
    // The minute sweep's purge of old expiries (migration 0019).
    index("remote_join_expiries_expired_idx").on(t.expiredAt),
  ],
);

/** A payment started for a plan change; the plan changes only when a verified provider event says it was paid. */
export const billingCheckouts = sqliteTable(
  "billing_checkouts",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    provider: text("provider", { enum: ["stripe", "fedapay", "sandbox"] }).notNull(),
    /** Stripe's Checkout Session id or FedaPay's transaction id. */
    providerRef: text("provider_ref"),
    plan: text("plan", { enum: ["starter", "pro", "enterprise"] }).notNull(),
    billingInterval: text("billing_interval", { enum: ["monthly", "yearly"] }).notNull(),
    currency: text("currency", { enum: ["EUR", "USD", "XOF"] }).notNull(),
    /** Integer minor units (cents; XOF has none). */
    amount: integer("amount").notNull(),
    status: text("status", { enum: ["open", "completed", "failed", "expired"] })
      .notNull()
      .default("open"),
    url: text("url"),
    returnUrl: text("return_url"),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    completedAt: integer("completed_at"),
  },
  (t) => [
    index("billing_checkouts_org_idx").on(t.organizationId, t.createdAt),
    index("billing_checkouts_provider_ref_idx").on(t.provider, t.providerRef),
  ],
);

export const invoices = sqliteTable(
  "invoices",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    provider: text("provider", { enum: ["stripe", "fedapay", "sandbox"] }).notNull(),
    /** The provider's invoice or transaction id: one invoice per provider payment. */
    providerRef: text("provider_ref").notNull(),
    checkoutId: text("checkout_id"),
    plan: text("plan", { enum: ["starter", "pro", "enterprise"] }).notNull(),
    billingInterval: text("billing_interval", { enum: ["monthly", "yearly"] }).notNull(),
    amount: integer("amount").notNull(),
    currency: text("currency", { enum: ["EUR", "USD", "XOF"] }).notNull(),
    status: text("status", { enum: ["paid", "open", "failed", "void"] }).notNull(),
    periodStart: integer("period_start").notNull(),
    periodEnd: integer("period_end").notNull(),
    createdAt: integer("created_at").notNull(),
    paidAt: integer("paid_at"),
  },
  (t) => [
    uniqueIndex("invoices_provider_ref_unique").on(t.provider, t.providerRef),
    index("invoices_org_idx").on(t.organizationId, t.createdAt),
  ],
);

/** Provider events already applied, by the provider's own event id: a replay changes nothing. */
export const billingEvents = sqliteTable(
  "billing_events",
  {
    provider: text("provider", { enum: ["stripe", "fedapay", "sandbox"] }).notNull(),
    eventId: text("event_id").notNull(),
    type: text("type").notNull(),
    organizationId: text("organization_id"),
    receivedAt: integer("received_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.provider, t.eventId] })],
);
/** The organization's current domain-verification token; regenerating replaces it. */
export const verificationTokens = sqliteTable("verification_tokens", {
  organizationId: text("organization_id")
    .primaryKey()
    .references(() => organizations.id, { onDelete: "cascade" }),
  token: text("token").notNull(),
  createdAt: integer("created_at").notNull(),
});

/** A domain an organization asked to verify, and what the last check found. */
export const verifiedDomains = sqliteTable(
  "verified_domains",
  {
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    domain: text("domain").notNull(),
    status: text("status", { enum: ["verified", "pending", "failed"] }).notNull(),
    method: text("method", { enum: ["dns", "file", "meta"] }).notNull(),
    verifiedAt: integer("verified_at"),
    lastCheckedAt: integer("last_checked_at"),
    /** When the cron checks it again: daily while verified, hourly while pending. Null = never. */
    nextCheckAt: integer("next_check_at"),
    failureReason: text("failure_reason"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.domain] }), index("verified_domains_next_check_idx").on(t.nextCheckAt)],
);

/** Webhook subscriptions. The signing secrets are kept (they sign every delivery). */
export const webhooks = sqliteTable(
  "webhooks",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    events: text("events", { mode: "json" }).$type<string[]>().notNull(),
    description: text("description"),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    disabledReason: text("disabled_reason"),
    secret: text("secret").notNull(),
    /** After a rotation the old secret signs too, until previousSecretExpiresAt. */
    previousSecret: text("previous_secret"),
    previousSecretExpiresAt: integer("previous_secret_expires_at"),
    /** Secrets replaced before the previous one and still inside their 24 h (migration 0017). */
    retiredSecrets: text("retired_secrets", { mode: "json" }).$type<{ secret: string; expiresAt: number }[]>().notNull().default([]),
    /** First failed attempt since the last success; 3 days of that disables the subscription. */
    failingSince: integer("failing_since"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    /** Full phone and e-mail in deliveries (owner/admin opt-in, issue 40); else masked phone, no e-mail. */
    includePersonalData: integer("include_personal_data", { mode: "boolean" }).notNull().default(false),
    /** The API version its payloads follow (set at creation, moved by PATCH); null = the first version. */
    apiVersion: text("api_version"),
  },
  (t) => [index("webhooks_org_idx").on(t.organizationId)],
);

/** One (event, subscription) delivery, or a redelivery of one. */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    webhookId: text("webhook_id")
      .notNull()
      .references(() => webhooks.id, { onDelete: "cascade" }),
    organizationId: text("organization_id").notNull(),
    eventId: text("event_id").notNull(),
    eventType: text("event_type").notNull(),
    /** The exact JSON body sent (signed as is on every attempt). */
    payload: text("payload").notNull(),
    status: text("status", { enum: ["pending", "succeeded", "failed"] }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    responseStatus: integer("response_status"),
    durationMs: integer("duration_ms"),
    lastError: text("last_error"),
    nextAttemptAt: integer("next_attempt_at"),
    /** A consumer holds the delivery while it sends it, so two copies of a message never both send. */
    leaseUntil: integer("lease_until"),
    redeliveryOf: text("redelivery_of"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    completedAt: integer("completed_at"),
  },
  (t) => [
    index("webhook_deliveries_webhook_idx").on(t.webhookId, t.createdAt),
    uniqueIndex("webhook_deliveries_event_unique")
      .on(t.webhookId, t.eventId)
      .where(sql`redelivery_of IS NULL`),
    index("webhook_deliveries_personal_idx")
      .on(t.organizationId, t.createdAt)
      .where(sql`json_extract(payload, '$.data.phone') IS NOT NULL`),
    // fanOutEvents reads back a batch of events' deliveries (migration 0019).
    index("webhook_deliveries_event_idx").on(t.eventId),
  ],
);
/** A user's push-messaging token (FCM). A token belongs to the latest user who registered it. */
export const pushDevices = sqliteTable(
  "push_devices",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    platform: text("platform", { enum: ["ios", "android", "web"] }).notNull(),
    token: text("token").notNull(),
    deviceId: text("device_id"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [uniqueIndex("push_devices_token_unique").on(t.token), index("push_devices_user_idx").on(t.userId)],
);

/** In-app notifications, listed by their user (CONTRACT §7). */
export const notifications = sqliteTable(
  "notifications",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    organizationId: text("organization_id"),
    type: text("type").notNull(),
    title: text("title").notNull(),
    body: text("body").notNull(),
    data: text("data", { mode: "json" }).$type<Record<string, string>>().notNull(),
    readAt: integer("read_at"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("notifications_user_created_idx").on(t.userId, t.createdAt)],
);

/**
 * One row per (event id, channel, recipient): `key` makes a redelivered event send nothing
 * twice; `status` and `provider_response` are what support reads when a delivery failed.
 */
export const notificationDeliveries = sqliteTable(
  "notification_deliveries",
  {
    key: text("key").primaryKey(),
    id: text("id").notNull(),
    eventId: text("event_id").notNull(),
    organizationId: text("organization_id"),
    type: text("type").notNull(),
    channel: text("channel", { enum: ["in_app", "push", "sms", "web_push", "whatsapp", "event"] }).notNull(),
    recipient: text("recipient").notNull(),
    provider: text("provider"),
    status: text("status", { enum: ["pending", "retrying", "sent", "delivered", "failed", "dead_lettered"] }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    payload: text("payload").notNull(),
    providerResponse: text("provider_response"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("notification_deliveries_id_unique").on(t.id),
    index("notification_deliveries_org_status_idx").on(t.organizationId, t.status, t.createdAt),
    index("notification_deliveries_personal_idx")
      .on(t.organizationId, t.createdAt)
      .where(sql`recipient <> '(anonymised)'`),
  ],
);

/** A widget visitor's browser push subscription, tied to the ticket it was taken for. */
export const visitorPushSubscriptions = sqliteTable(
  "visitor_push_subscriptions",
  {
    ticketId: text("ticket_id").notNull(),
    endpoint: text("endpoint").notNull(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    p256dh: text("p256dh").notNull(),
    auth: text("auth").notNull(),
    language: text("language"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.ticketId, t.endpoint] }),
    index("visitor_push_subscriptions_org_created_idx").on(t.organizationId, t.createdAt),
  ],
);

/** Appointment occurrences already reminded (once per occurrence, recurring ones included). */
export const appointmentReminders = sqliteTable(
  "appointment_reminders",
  {
    eventId: text("event_id")
      .notNull()
      .references(() => calendarEvents.id, { onDelete: "cascade" }),
    occurrenceStart: integer("occurrence_start").notNull(),
    sentAt: integer("sent_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.eventId, t.occurrenceStart] })],
);

/**
 * What each ticket currently counts for in `analytics_hourly` (src/domain/analytics.ts
 * ticketFacts), with the ticket version counted: the drain replaces a ticket's contribution
 * only with a newer version, so a replayed batch counts nothing twice.
 */
export const analyticsTicketFacts = sqliteTable(
  "analytics_ticket_facts",
  {
    ticketId: text("ticket_id").primaryKey(),
    queueId: text("queue_id").notNull(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    hourStart: integer("hour_start").notNull(),
    channel: text("channel").notNull(),
    served: integer("served").notNull(),
    noShow: integer("no_show").notNull(),
    cancelled: integer("cancelled").notNull(),
    transferred: integer("transferred").notNull(),
    waitMs: integer("wait_ms"),
    waitBucket: integer("wait_bucket"),
    serviceMs: integer("service_ms"),
    serviceBucket: integer("service_bucket"),
    estimateErrorMs: integer("estimate_error_ms"),
    estimateErrorBucket: integer("estimate_error_bucket"),
    estimateBiasMs: integer("estimate_bias_ms"),
    version: integer("version").notNull(),
  },
  (t) => [index("analytics_ticket_facts_queue_hour_idx").on(t.queueId, t.hourStart)],
);

/** Per queue per UTC hour (of ticket creation): counts, sums, sparse duration histograms and per-channel counts. */
export const analyticsHourly = sqliteTable(
  "analytics_hourly",
  {
    queueId: text("queue_id").notNull(),
    hourStart: integer("hour_start").notNull(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    created: integer("created").notNull().default(0),
    served: integer("served").notNull().default(0),
    noShow: integer("no_show").notNull().default(0),
    cancelled: integer("cancelled").notNull().default(0),
    transferred: integer("transferred").notNull().default(0),
    waited: integer("waited").notNull().default(0),
    waitMs: integer("wait_ms").notNull().default(0),
    waitHist: text("wait_hist").notNull().default("{}"),
    serviced: integer("serviced").notNull().default(0),
    serviceMs: integer("service_ms").notNull().default(0),
    serviceHist: text("service_hist").notNull().default("{}"),
    estimated: integer("estimated").notNull().default(0),
    estimateErrorMs: integer("estimate_error_ms").notNull().default(0),
    estimateBiasMs: integer("estimate_bias_ms").notNull().default(0),
    estimateErrorHist: text("estimate_error_hist").notNull().default("{}"),
    // Per channel and metric ("app_c", … "recovery_wm"; src/domain/analytics.ts CHANNEL_COLUMNS), migration 0015.
    ...Object.fromEntries(CHANNEL_COLUMNS.map((column) => [column, integer(column).notNull().default(0)])),
  },
  (t) => [primaryKey({ columns: [t.queueId, t.hourStart] }), index("analytics_hourly_org_idx").on(t.organizationId)],
);

/**
 * A desk (counter) at a location: the queues its operator calls from (docs/desks.md).
 * `operatorId` is who has it open; the partial unique index keeps one desk per operator.
 */
export const desks = sqliteTable(
  "desks",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    locationId: text("location_id")
      .notNull()
      .references(() => locations.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    displayName: text("display_name"),
    queueIds: text("queue_ids", { mode: "json" }).$type<string[]>().notNull(),
    /** Queue id → weight (1..10) in the desk's rule; a queue not listed weighs 1 (docs/desks.md). */
    queueWeights: text("queue_weights", { mode: "json" }).$type<Record<string, number>>().notNull().default({}),
    operatorId: text("operator_id"),
    openedAt: integer("opened_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    index("desks_location_idx").on(t.locationId),
    uniqueIndex("desks_operator_unique")
      .on(t.operatorId)
      .where(sql`${t.operatorId} is not null`),
  ],
);

/** The outcomes an operator may record when completing a ticket of the service (docs/desks.md). */
export const serviceOutcomes = sqliteTable(
  "service_outcomes",
  {
    serviceId: text("service_id")
      .notNull()
      .references(() => services.id, { onDelete: "cascade" }),
    organizationId: text("organization_id").notNull(),
    code: text("code").notNull(),
    label: text("label").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.serviceId, t.code] })],
);

/**
 * Organizations whose tickets predate the analytics aggregates (migration 0015 lists them):
 * the minute sweep counts their tickets a page at a time after the keyset cursor, and deletes
 * the row when done (src/jobs/analytics-backfill.ts).
 */
export const analyticsBackfill = sqliteTable("analytics_backfill", {
  organizationId: text("organization_id")
    .primaryKey()
    .references(() => organizations.id, { onDelete: "cascade" }),
  afterCreatedAt: integer("after_created_at").notNull().default(-1),
  afterId: text("after_id").notNull().default(""),
  tickets: integer("tickets").notNull().default(0),
});

/** An organization's SMS policy (docs/limits.md); a null column is the documented default. */
export const smsPolicies = sqliteTable("sms_policies", {
  organizationId: text("organization_id")
    .primaryKey()
    .references(() => organizations.id, { onDelete: "cascade" }),
  /** JSON array of ISO 3166 alpha-2 codes. */
  allowedCountries: text("allowed_countries"),
  perPhonePerDay: integer("per_phone_per_day"),
  perAddressPerDay: integer("per_address_per_day"),
  perWidgetKeyPerDay: integer("per_widget_key_per_day"),
  perTicket: integer("per_ticket"),
  dailyCeiling: integer("daily_ceiling"),
  businessReservePercent: integer("business_reserve_percent"),
  updatedAt: integer("updated_at").notNull(),
  /** 1 = a visitor's number is texted only after its one-time code (migration 0026); null = default (off). */
  requirePhoneCode: integer("require_phone_code"),
  /** off | always | when_half_used (issue 44); null = off. */
  botCheck: text("bot_check"),
});

/** Exact counters of the SMS caps, taken with a conditional upsert (used < limit). */
export const smsCounters = sqliteTable(
  "sms_counters",
  {
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    scope: text("scope", { enum: ["phone", "address", "widget_key", "ticket", "day", "alert"] }).notNull(),
    subject: text("subject").notNull(),
    day: text("day").notNull(),
    used: integer("used").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.scope, t.subject, t.day] })],
);

// ---- Integrators (issue #32) ----

/** Every domain event of an organization, kept 24 h for GET /v1/events (migration 0025). */
export const organizationEvents = sqliteTable(
  "organization_events",
  {
    /** Recording order: the stream's order, never reused (AUTOINCREMENT). */
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    id: text("id").notNull().unique(),
    organizationId: text("organization_id").notNull(),
    type: text("type").notNull(),
    queueId: text("queue_id"),
    /**
     * The webhook envelope of the event (domain/webhooks.ts eventPayload), as JSON, without
     * personal data (issue 40): the phone masked, no e-mail (domain/webhooks.ts splitPersonalData).
     */
    payload: text("payload").notNull(),
    /**
     * The personal fields the payload leaves out (full phone, e-mail), as JSON sealed like webhook
     * secrets (lib/secret-box.ts); opened only for readers that opted in. Null: none, or erased.
     */
    personalSealed: text("personal_sealed"),
    recordedAt: integer("recorded_at").notNull(),
  },
  (t) => [index("organization_events_org_seq_idx").on(t.organizationId, t.seq), index("organization_events_recorded_idx").on(t.recordedAt)],
);

// ---- Conversations (issue 30, docs/conversations.md) ------------------------------------------

/** One message of a ticket's conversation, either way; an outbound one names its delivery. */
export const ticketMessages = sqliteTable(
  "ticket_messages",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    ticketId: text("ticket_id").notNull(),
    queueId: text("queue_id").notNull(),
    direction: text("direction", { enum: ["in", "out"] }).notNull(),
    channel: text("channel", { enum: ["sms", "whatsapp", "ussd"] }).notNull(),
    phone: text("phone").notNull(),
    body: text("body").notNull(),
    /** The keyword an inbound message was read as (HERE, LATE, …); null for free text. */
    keyword: text("keyword"),
    /** The member who wrote an outbound reply; null for the service's own answers. */
    authorId: text("author_id"),
    /** notification_deliveries.event_id of an outbound message. */
    deliveryEventId: text("delivery_event_id"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    index("ticket_messages_ticket_idx").on(t.ticketId, t.createdAt),
    // Only the messages still holding a number and a text (docs/retention.md).
    index("ticket_messages_personal_idx")
      .on(t.organizationId, t.createdAt)
      .where(sql`phone <> '(anonymised)'`),
  ],
);

/** A number that sent STOP to an organization: nothing more goes to it until START. */
export const optOuts = sqliteTable(
  "opt_outs",
  {
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    phone: text("phone").notNull(),
    /** The channel the STOP came through. */
    channel: text("channel").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.phone] })],
);
// ── Audit log and secrets at rest (issue 31, docs/security.md, migration 0023) ──

/**
 * One change made by a person or a key. Written with `seq`/`prevHash`/`hash` null in the batch
 * of the change itself; sealing (src/audit/audit.ts) chains it to the organization's
 * previous entry. Never updated otherwise, deleted only by retention.
 */
export const auditEvents = sqliteTable(
  "audit_events",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id").notNull(),
    seq: integer("seq"),
    actorType: text("actor_type", { enum: ["user", "api_key", "system"] }).notNull(),
    actorId: text("actor_id"),
    entityType: text("entity_type").notNull(),
    entityId: text("entity_id").notNull(),
    action: text("action").notNull(),
    /** JSON {field: {before, after}}; secrets never. */
    changes: text("changes").notNull().default("{}"),
    ip: text("ip"),
    requestId: text("request_id"),
    createdAt: integer("created_at").notNull(),
    prevHash: text("prev_hash"),
    hash: text("hash"),
    /** The id of the audit key whose HMAC is `hash` (issue 40); null = sealed before keyed chains (plain SHA-256). */
    keyId: text("key_id"),
  },
  (t) => [
    uniqueIndex("audit_events_chain_idx").on(t.organizationId, t.seq),
    index("audit_events_org_time_idx").on(t.organizationId, t.createdAt),
    // The minute sweep's reads: entries past a retention limit, and entries not sealed yet.
    index("audit_events_created_idx").on(t.createdAt, t.organizationId),
    index("audit_events_unsealed_idx")
      .on(t.organizationId)
      .where(sql`seq IS NULL`),
    index("audit_events_entity_idx").on(t.organizationId, t.entityType, t.entityId),
  ],
);

/**
 * Signed checkpoints of an organization's chain (issue 40): `signature` is the HMAC, under the
 * audit key `key_id`, of (organization, seq, hash). `verify` starts from the last one.
 */
export const auditCheckpoints = sqliteTable(
  "audit_checkpoints",
  {
    organizationId: text("organization_id").notNull(),
    seq: integer("seq").notNull(),
    hash: text("hash").notNull(),
    keyId: text("key_id").notNull(),
    signature: text("signature").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.seq] })],
);

/** The last entry retention deleted from an organization's chain: where the kept chain starts. */
export const auditChainAnchors = sqliteTable("audit_chain_anchors", {
  organizationId: text("organization_id").primaryKey(),
  seq: integer("seq").notNull(),
  hash: text("hash").notNull(),
  updatedAt: integer("updated_at").notNull(),
});
// ── Appointments (issue 28, docs/appointments.md) ────────────────────────────────────────

/**
 * A booked slot of a service at a location. Written with a conditional INSERT ... SELECT
 * (slot capacity, staff member free) so booking stays exact under concurrency.
 */
export const appointments = sqliteTable(
  "appointments",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    serviceId: text("service_id")
      .notNull()
      .references(() => services.id, { onDelete: "cascade" }),
    locationId: text("location_id")
      .notNull()
      .references(() => locations.id, { onDelete: "cascade" }),
    staffId: text("staff_id").references(() => users.id, { onDelete: "set null" }),
    startAt: integer("start_at").notNull(),
    endAt: integer("end_at").notNull(),
    status: text("status", { enum: ["booked", "checked_in", "cancelled", "no_show"] })
      .notNull()
      .default("booked"),
    customerName: text("customer_name").notNull(),
    customerPhone: text("customer_phone"),
    customerEmail: text("customer_email"),
    language: text("language").notNull().default("fr"),
    notes: text("notes"),
    customerUserId: text("customer_user_id").references(() => users.id, { onDelete: "set null" }),
    calendarEventId: text("calendar_event_id"),
    /** SHA-256 of the manage token (the customer's capability, like the visitor's ticket token). */
    tokenHash: text("token_hash").notNull(),
    ticketId: text("ticket_id"),
    queueId: text("queue_id"),
    checkedInAt: integer("checked_in_at"),
    cancelledAt: integer("cancelled_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    index("appointments_slot_idx").on(t.serviceId, t.locationId, t.startAt),
    index("appointments_staff_idx").on(t.staffId, t.startAt),
    index("appointments_location_start_idx").on(t.locationId, t.startAt),
    index("appointments_customer_idx").on(t.customerUserId, t.startAt),
    index("appointments_status_start_idx").on(t.status, t.startAt),
  ],
);
/**
 * A short hold on a slot while the customer types their details (docs/appointments.md): it
 * counts against the slot's capacity (and keeps its staff member busy) until `expires_at`;
 * an expired hold simply stops counting, and booking with its id converts it.
 */
export const appointmentHolds = sqliteTable(
  "appointment_holds",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    serviceId: text("service_id")
      .notNull()
      .references(() => services.id, { onDelete: "cascade" }),
    locationId: text("location_id")
      .notNull()
      .references(() => locations.id, { onDelete: "cascade" }),
    staffId: text("staff_id").references(() => users.id, { onDelete: "set null" }),
    startAt: integer("start_at").notNull(),
    endAt: integer("end_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    index("appointment_holds_slot_idx").on(t.serviceId, t.locationId, t.startAt),
    index("appointment_holds_staff_idx").on(t.staffId, t.startAt),
    index("appointment_holds_expires_idx").on(t.expiresAt),
  ],
);
// ---- visits (issue 29, docs/visits.md) -------------------------------------------------------

/** A service's intake questions (domain/intake.ts), one JSON array per service. */
export const serviceIntake = sqliteTable("service_intake", {
  serviceId: text("service_id")
    .primaryKey()
    .references(() => services.id, { onDelete: "cascade" }),
  organizationId: text("organization_id").notNull(),
  fields: text("fields", { mode: "json" }).$type<import("../domain/intake").IntakeField[]>().notNull(),
  updatedAt: integer("updated_at").notNull(),
});

/** The labels an organization's staff have put on tickets (docs/visits.md): the list to pick from. */
export const organizationLabels = sqliteTable(
  "organization_labels",
  {
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    label: text("label").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.label] })],
);

// ---- phone codes (issue 26, docs/limits.md "SMS and messaging caps") ---------------------------

/** A ticket's one-time code proving its visitor's number: only the code's HMAC is kept. */
export const phoneVerifications = sqliteTable(
  "phone_verifications",
  {
    ticketId: text("ticket_id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    /** The number the code went to (bare E.164) and the ticket's language: what a resend needs. */
    phone: text("phone").notNull(),
    language: text("language"),
    codeHash: text("code_hash").notNull(),
    expiresAt: integer("expires_at").notNull(),
    failedAttempts: integer("failed_attempts").notNull().default(0),
    codesSent: integer("codes_sent").notNull().default(1),
    verifiedAt: integer("verified_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    index("phone_verifications_org_created_idx").on(t.organizationId, t.createdAt),
    index("phone_verifications_org_phone_idx").on(t.organizationId, t.phone),
  ],
);

// ---- inbound isolation and exactly-once (issue 44, docs/conversations.md) ----------------------

/** A number (or sender) that belongs to one organization: a text sent to it reaches only that organization. */
export const smsSenders = sqliteTable(
  "sms_senders",
  {
    number: text("number").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("sms_senders_org_idx").on(t.organizationId)],
);

/** Each provider message taken once: a replay or a provider's retry of the same id changes nothing. */
export const inboundReceipts = sqliteTable(
  "inbound_receipts",
  {
    provider: text("provider").notNull(),
    messageId: text("message_id").notNull(),
    receivedAt: integer("received_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.provider, t.messageId] }), index("inbound_receipts_received_idx").on(t.receivedAt)],
);

/**
 * An organization's USSD code at its aggregator (docs/conversations.md): the callbacks for
 * `serviceCode` reach this organization, authenticated by the secret (kept as its SHA-256) and,
 * when listed, the aggregator's addresses.
 */
export const ussdCodes = sqliteTable("ussd_codes", {
  organizationId: text("organization_id")
    .primaryKey()
    .references(() => organizations.id, { onDelete: "cascade" }),
  serviceCode: text("service_code").notNull().unique(),
  secretHash: text("secret_hash").notNull(),
  /** JSON array of addresses the aggregator calls from; null: any address with the secret. */
  allowedAddresses: text("allowed_addresses", { mode: "json" }).$type<string[]>(),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
});

/**
 * The conversation a customer's number has on a shared number: the ticket they chose from the
 * menu, or the menu they were sent (options and the text it holds until they answer).
 */
export const inboundThreads = sqliteTable(
  "inbound_threads",
  {
    phone: text("phone").notNull(),
    toNumber: text("to_number").notNull(),
    ticketId: text("ticket_id"),
    /** JSON [{ticketId, queueId, organizationId, name, code}] of a menu awaiting the customer's answer. */
    menu: text("menu"),
    pendingBody: text("pending_body"),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.phone, t.toNumber] }), index("inbound_threads_updated_idx").on(t.updatedAt)],
);

/**
 * The business's own text of a customer message (docs/message-templates.md): per organization
 * (`queue_scope` empty) or per queue, per language; absent = our default.
 */
export const messageTemplates = sqliteTable(
  "message_templates",
  {
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    /** "" for the whole organization, else the queue the text is for (it wins over the organization's). */
    queueScope: text("queue_scope").notNull().default(""),
    key: text("key").notNull(),
    language: text("language").notNull(),
    title: text("title").notNull(),
    body: text("body").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.queueScope, t.key, t.language] })],
);

/**
 * The customer's verdict on a served ticket (docs/visits.md, feedback): one per ticket, 1–5 and
 * an optional comment, from the status page/widget (the ticket token) or an SMS reply. The
 * ticket's queue, service, desk, operator and times are copied in when it is given, so the
 * analytics read one table whatever the room or the projection did since.
 */
export const ticketFeedback = sqliteTable(
  "ticket_feedback",
  {
    ticketId: text("ticket_id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    queueId: text("queue_id").notNull(),
    serviceId: text("service_id").notNull(),
    deskId: text("desk_id"),
    operatorId: text("operator_id"),
    score: integer("score").notNull(),
    comment: text("comment"),
    channel: text("channel", { enum: ["widget", "sms"] }).notNull(),
    /** The ticket's join (the analytics cohort) and its wait, join → call, in ms (null when never called). */
    ticketCreatedAt: integer("ticket_created_at").notNull(),
    waitMs: integer("wait_ms"),
    servedAt: integer("served_at").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("ticket_feedback_queue_created_idx").on(t.queueId, t.ticketCreatedAt)],
);

/**
 * An organization's WhatsApp Business number on Meta's Cloud API (docs/notifications.md): the
 * `phone_number_id` messages are sent from and that identifies the organization on inbound
 * messages, the number itself (for wa.me links) and the names of its approved templates.
 */
export const whatsappSettings = sqliteTable(
  "whatsapp_settings",
  {
    organizationId: text("organization_id")
      .primaryKey()
      .references(() => organizations.id, { onDelete: "cascade" }),
    phoneNumberId: text("phone_number_id").notNull(),
    phoneNumber: text("phone_number").notNull(),
    joinedTemplate: text("joined_template"),
    calledTemplate: text("called_template"),
    almostCalledTemplate: text("almost_called_template"),
    reminderTemplate: text("reminder_template"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [uniqueIndex("whatsapp_settings_phone_number_id_idx").on(t.phoneNumberId)],
);

/** A ticket whose customer chose to hear of it on WhatsApp rather than SMS (the default). */
export const ticketChannels = sqliteTable(
  "ticket_channels",
  {
    ticketId: text("ticket_id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    channel: text("channel", { enum: ["whatsapp"] }).notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("ticket_channels_created_idx").on(t.createdAt)],
);

/**
 * The customer's last WhatsApp message to an organization: free text may be sent for 24 hours
 * after it (Meta's customer-service window); outside it only approved templates.
 */
export const whatsappWindows = sqliteTable(
  "whatsapp_windows",
  {
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    phone: text("phone").notNull(),
    lastInboundAt: integer("last_inbound_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.organizationId, t.phone] }), index("whatsapp_windows_last_inbound_idx").on(t.lastInboundAt)],
);

/**
 * An organization's OpenID Connect single sign-on (migration 0040, docs/sso.md). The client
 * secret is sealed (lib/secret-box.ts) and never read back through the API.
 */
export const ssoConnections = sqliteTable("sso_connections", {
  organizationId: text("organization_id")
    .primaryKey()
    .references(() => organizations.id, { onDelete: "cascade" }),
  issuer: text("issuer").notNull(),
  clientId: text("client_id").notNull(),
  clientSecretSealed: text("client_secret_sealed").notNull(),
  defaultRole: text("default_role", { enum: ["admin", "manager", "operator"] }).notNull(),
  /** Passwords are refused for e-mails of the connection's domains. */
  enforced: integer("enforced", { mode: "boolean" }).notNull().default(false),
  /** The ID token's claim whose value(s) pick the role of a person who joins (migration 0042), e.g. `groups`. */
  roleClaim: text("role_claim"),
  /** The claim's value → the role it gives; the highest role of the values wins, none: `defaultRole`. */
  roleMapping: text("role_mapping", { mode: "json" }).$type<Record<string, "admin" | "manager" | "operator">>(),
  /** The locations a manager or operator who joins works at; null: the whole organization. */
  defaultLocationIds: text("default_location_ids", { mode: "json" }).$type<string[]>(),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
});

/** The e-mail domains of an SSO connection: a domain signs in through one organization only. */
export const ssoDomains = sqliteTable(
  "sso_domains",
  {
    domain: text("domain").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
  },
  (t) => [index("sso_domains_organization_idx").on(t.organizationId)],
);

/** A sign-in sent to the identity provider and not back yet: used once, within 10 minutes. */
export const ssoSignIns = sqliteTable(
  "sso_sign_ins",
  {
    /** SHA-256 of the `state` sent to the provider (the browser holds the state itself in a cookie). */
    stateHash: text("state_hash").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    nonce: text("nonce").notNull(),
    codeVerifier: text("code_verifier").notNull(),
    redirectUri: text("redirect_uri").notNull(),
    /** The page of ours the browser goes back to once signed in (migration 0042); null: the callback answers JSON. */
    returnTo: text("return_to"),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("sso_sign_ins_expires_idx").on(t.expiresAt)],
);
