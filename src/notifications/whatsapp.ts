import { and, desc, eq, lt, sql } from "drizzle-orm";
import { organizations, queues, ticketChannels, ticketMessages, whatsappSettings, whatsappWindows } from "../db/schema";
import { CATALOGUES, isLanguage, type Language } from "../domain/languages";
import { smsText } from "../domain/message-templates";
import { ApiError, notFound } from "../http/errors";
import { DAY, HOUR, iso } from "../lib/time";
import { sendWhatsapp, type SendOutcome } from "../providers";
import type { WhatsappMessage } from "../providers/whatsapp";
import type { Deps } from "../http/deps";

// WhatsApp as a notification channel (docs/notifications.md, "WhatsApp"). An organization
// connects its business number (Meta's phone_number_id) and names its approved templates; a
// ticket whose customer chose WhatsApp hears of its join, almost-called, called and reminder
// (recall) messages through those templates, with quick replies Here / Late / Cancel. Any other message is
// free text, which Meta delivers only inside the 24-hour customer-service window opened by the
// customer's last message to the business; outside it the delivery fails with a clear reason.

/** Meta's customer-service window: free text for 24 hours after the customer's last message. */
export const WHATSAPP_WINDOW_MS = 24 * HOUR;
/** Windows are forgotten (the number with them) two days after the customer's last message. */
const WINDOW_RETENTION_MS = 2 * DAY;

export const WHATSAPP_TEMPLATE_KINDS = ["joined", "called", "almostCalled", "reminder"] as const;
export type WhatsappTemplateKind = (typeof WHATSAPP_TEMPLATE_KINDS)[number];

/** The ticket events sent through an approved template (the rest is free text). */
export const TEMPLATE_OF_EVENT: Record<string, WhatsappTemplateKind> = {
  "ticket.created": "joined",
  "ticket.called": "called",
  "ticket.almost_called": "almostCalled",
  "ticket.recalled": "reminder",
};

/** The quick replies of every template, in button order: their payloads are our keywords in the template's language (the catalogue's first word). */
const quickReplies = (language: Language): string[] =>
  (["here", "late", "cancel"] as const).map((keyword) => CATALOGUES[language].sms.keywords[keyword][0]!);
/** Meta's code for a template language where it is not ours (Meta has no plain "pt"). */
const META_LANGUAGE: Partial<Record<Language, string>> = { pt: "pt_PT" };

export interface WhatsappSettings {
  phoneNumberId: string;
  phoneNumber: string;
  templates: Record<WhatsappTemplateKind, string | null>;
  createdAt: string;
  updatedAt: string;
}

type SettingsRow = typeof whatsappSettings.$inferSelect;

function settingsRecord(r: SettingsRow): WhatsappSettings {
  return {
    phoneNumberId: r.phoneNumberId,
    phoneNumber: r.phoneNumber,
    templates: { joined: r.joinedTemplate, called: r.calledTemplate, almostCalled: r.almostCalledTemplate, reminder: r.reminderTemplate },
    createdAt: iso(r.createdAt),
    updatedAt: iso(r.updatedAt),
  };
}

export async function readWhatsappSettings({ db }: Deps, organizationId: string): Promise<WhatsappSettings | null> {
  const [row] = await db.select().from(whatsappSettings).where(eq(whatsappSettings.organizationId, organizationId));
  return row ? settingsRecord(row) : null;
}

export async function requireWhatsappSettings(deps: Deps, organizationId: string): Promise<WhatsappSettings> {
  const settings = await readWhatsappSettings(deps, organizationId);
  if (!settings) throw notFound("WhatsApp configuration");
  return settings;
}

/** The organization a business number belongs to (inbound messages name it). */
export async function organizationOfWhatsappNumber({ db }: Deps, phoneNumberId: string): Promise<string | null> {
  const [row] = await db
    .select({ organizationId: whatsappSettings.organizationId })
    .from(whatsappSettings)
    .where(eq(whatsappSettings.phoneNumberId, phoneNumberId));
  return row?.organizationId ?? null;
}

export interface WhatsappSettingsInput {
  phoneNumberId: string;
  phoneNumber: string;
  templates?: Partial<Record<WhatsappTemplateKind, string | null>> | undefined;
}

/** Connects (or changes) the organization's number; a number another organization uses is 409. */
export async function saveWhatsappSettings(deps: Deps, organizationId: string, input: WhatsappSettingsInput, at: number) {
  const { db } = deps;
  const owner = await organizationOfWhatsappNumber(deps, input.phoneNumberId);
  if (owner && owner !== organizationId) {
    throw new ApiError("CONFLICT", "This WhatsApp phone number id is connected to another organization", { field: "phoneNumberId" });
  }
  const t = input.templates ?? {};
  const values = {
    phoneNumberId: input.phoneNumberId,
    phoneNumber: input.phoneNumber,
    joinedTemplate: t.joined ?? null,
    calledTemplate: t.called ?? null,
    almostCalledTemplate: t.almostCalled ?? null,
    reminderTemplate: t.reminder ?? null,
    updatedAt: at,
  };
  const [row] = await db
    .insert(whatsappSettings)
    .values({ organizationId, ...values, createdAt: at })
    .onConflictDoUpdate({ target: whatsappSettings.organizationId, set: values })
    .returning();
  return settingsRecord(row!);
}

export async function deleteWhatsappSettings({ db }: Deps, organizationId: string): Promise<void> {
  const gone = await db
    .delete(whatsappSettings)
    .where(eq(whatsappSettings.organizationId, organizationId))
    .returning({ id: whatsappSettings.organizationId });
  if (gone.length === 0) throw notFound("WhatsApp configuration");
}

/** A join's choice of WhatsApp: refused (400 naming the field) unless the organization has a number. */
export async function checkWhatsappChoice(deps: Deps, organizationId: string, phone: string | null): Promise<void> {
  if (!phone) {
    throw new ApiError("VALIDATION_ERROR", "Invalid value for phone: WhatsApp notifications need the customer's number", {
      field: "phone",
      reason: "required",
    });
  }
  if (!(await readWhatsappSettings(deps, organizationId))) {
    throw new ApiError("VALIDATION_ERROR", "Invalid value for notifyBy: this organization has no WhatsApp number", {
      field: "notifyBy",
      reason: "not_configured",
    });
  }
}

/** Records that this ticket's messages go by WhatsApp. */
export async function chooseWhatsapp({ db }: Deps, organizationId: string, ticketId: string, at: number): Promise<void> {
  await db.insert(ticketChannels).values({ ticketId, organizationId, channel: "whatsapp", createdAt: at }).onConflictDoNothing();
}

/** The customer wrote to the business: the window for free text opens (or extends) from `at`. */
export async function openWhatsappWindow({ db }: Deps, organizationId: string, phone: string, at: number): Promise<void> {
  await db.batch([
    db.delete(whatsappWindows).where(lt(whatsappWindows.lastInboundAt, at - WINDOW_RETENTION_MS)),
    db
      .insert(whatsappWindows)
      .values({ organizationId, phone, lastInboundAt: at })
      .onConflictDoUpdate({ target: [whatsappWindows.organizationId, whatsappWindows.phone], set: { lastInboundAt: at } }),
  ]);
}

export async function isWhatsappWindowOpen({ db }: Deps, organizationId: string, phone: string, at: number): Promise<boolean> {
  const [row] = await db
    .select({ at: whatsappWindows.lastInboundAt })
    .from(whatsappWindows)
    .where(and(eq(whatsappWindows.organizationId, organizationId), eq(whatsappWindows.phone, phone)));
  return !!row && row.at > at - WHATSAPP_WINDOW_MS;
}

/**
 * What a WhatsApp delivery carries in its data (strings only) beside its title and body: the
 * business number, and for a template message its name, language and body values.
 */
export function whatsappData(
  settings: Pick<WhatsappSettings, "phoneNumberId" | "templates">,
  organizationId: string,
  type: string,
  language: string,
  bodyParameters: string[],
): Record<string, string> {
  const kind = TEMPLATE_OF_EVENT[type];
  const template = kind ? settings.templates[kind] : null;
  return {
    waOrganizationId: organizationId,
    waPhoneNumberId: settings.phoneNumberId,
    ...(template ? { waTemplate: template, waLanguage: language, waParameters: JSON.stringify(bodyParameters) } : {}),
  };
}

/** Sends one stored WhatsApp delivery: its template, else free text inside the window. */
export async function sendWhatsappDelivery(
  deps: Deps,
  phone: string,
  p: { title: string; body: string; data: Record<string, string> },
  at: number,
): Promise<SendOutcome> {
  const { env } = deps;
  const { waOrganizationId: organizationId, waPhoneNumberId: phoneNumberId, waTemplate: template } = p.data;
  if (!organizationId || !phoneNumberId) return { ok: false, provider: "whatsapp", transient: false, response: "no WhatsApp number" };
  let message: WhatsappMessage;
  if (template) {
    const language: Language = isLanguage(p.data.waLanguage) ? p.data.waLanguage : "fr";
    message = {
      kind: "template",
      template: {
        name: template,
        language: META_LANGUAGE[language] ?? language,
        bodyParameters: JSON.parse(p.data.waParameters ?? "[]") as string[],
        quickReplies: quickReplies(language),
      },
    };
  } else if (await isWhatsappWindowOpen(deps, organizationId, phone, at)) {
    message = { kind: "text", body: smsText(p) };
  } else {
    return {
      ok: false,
      provider: "policy",
      transient: false,
      response:
        "WHATSAPP_WINDOW_CLOSED: free text is only delivered within 24 hours of the customer's last message, and this message has no approved template",
    };
  }
  return sendWhatsapp(env, phoneNumberId, phone, message);
}

/**
 * The wa.me link a QR code at the door opens: a chat with the organization's number, the queue's
 * join request typed in: the organization's language's join verb (`REJOINDRE`, `JOIN`, `UNIRME`…)
 * and the queue's `smsKeyword`, which the inbound message joins with (join by text, docs/visits.md).
 * A queue without a keyword gets its id instead, which joins nothing: `smsKeyword: null` says so.
 */
export async function whatsappJoinLink(
  deps: Deps,
  organizationId: string,
  queueId: string,
): Promise<{ url: string; phoneNumber: string; text: string; smsKeyword: string | null } | null> {
  const { db } = deps;
  const settings = await readWhatsappSettings(deps, organizationId);
  if (!settings) return null;
  const [[org], [queue]] = await Promise.all([
    db.select({ language: organizations.defaultLanguage }).from(organizations).where(eq(organizations.id, organizationId)),
    db.select({ smsKeyword: queues.smsKeyword }).from(queues).where(eq(queues.id, queueId)),
  ]);
  // The organization's join verb (JOIN, REJOINDRE, UNIRME…); French when it has no language of the catalogue.
  const language: Language = isLanguage(org?.language) ? org.language : "fr";
  const smsKeyword = queue?.smsKeyword ?? null;
  const text = `${CATALOGUES[language].sms.join[0]!} ${smsKeyword ?? queueId}`;
  const digits = settings.phoneNumber.replace(/^\+/, "");
  return { url: `https://wa.me/${digits}?text=${encodeURIComponent(text)}`, phoneNumber: settings.phoneNumber, text, smsKeyword };
}

/**
 * The business number a staff answer to this ticket's customer goes from by WhatsApp: when the
 * customer uses WhatsApp (chose it at the join, or last wrote on the ticket by WhatsApp) and
 * their 24-hour window is open (free text is delivered only then). Null: the answer goes by SMS.
 */
export async function whatsappReplyNumber(
  deps: Deps,
  ticket: { id: string; organizationId: string },
  phone: string,
  at: number,
): Promise<string | null> {
  const { db } = deps;
  const [chosen, lastIn] = await db.batch([
    db
      .select({ ticketId: ticketChannels.ticketId })
      .from(ticketChannels)
      .where(and(eq(ticketChannels.ticketId, ticket.id), eq(ticketChannels.channel, "whatsapp")))
      .limit(1),
    db
      .select({ channel: ticketMessages.channel })
      .from(ticketMessages)
      .where(and(eq(ticketMessages.ticketId, ticket.id), eq(ticketMessages.direction, "in")))
      .orderBy(desc(ticketMessages.createdAt), sql`rowid desc`)
      .limit(1),
  ]);
  if (chosen.length === 0 && lastIn[0]?.channel !== "whatsapp") return null;
  const settings = await readWhatsappSettings(deps, ticket.organizationId);
  if (!settings || !(await isWhatsappWindowOpen(deps, ticket.organizationId, phone, at))) return null;
  return settings.phoneNumberId;
}
