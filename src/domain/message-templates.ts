import { SegmentedMessage } from "sms-segments-calculator";
import { LANGUAGES, TEMPLATES, type Language, type TemplateKey, type TemplateText } from "./notification-templates";

// The business's own words (docs/message-templates.md): every automatic message a customer
// receives may be rewritten per organization, and again per queue, in each language. What a
// text may say is bounded by what the sender knows when it sends: a variable the sender never
// fills would print "—" to every customer, so it is refused when the template is saved.

/** The events of a ticket told to its customer (docs/notifications.md). */
export const TICKET_CUSTOMER_KEYS = [
  "ticket.created",
  "ticket.almost_called",
  "ticket.called",
  "ticket.recalled",
  "ticket.held",
  "ticket.resumed",
  "ticket.stepped_back",
  "ticket.served",
  "ticket.cancelled",
  "ticket.skipped",
  "ticket.transferred",
  "ticket.expired",
  "ticket.recovered",
  "ticket.auto_skipped",
  "review.request",
  "inactivity.warning",
] as const satisfies readonly TemplateKey[];

/** The messages a customer receives, which a business may rewrite. Staff notices stay ours. */
export const CUSTOMER_TEMPLATE_KEYS = [
  ...TICKET_CUSTOMER_KEYS,
  "appointment.confirmed",
  "appointment.rescheduled",
  "appointment.cancelled",
  "appointment.reminder",
  "appointment.no_show",
  "phone.code",
] as const satisfies readonly TemplateKey[];
export type CustomerTemplateKey = (typeof CUSTOMER_TEMPLATE_KEYS)[number];

export function isCustomerTemplateKey(key: string): key is CustomerTemplateKey {
  return (CUSTOMER_TEMPLATE_KEYS as readonly string[]).includes(key);
}

/** What the sender of a ticket's message fills in, whatever the message. */
const TICKET_VARIABLES = ["code", "queue", "position", "wait", "ahead", "counter", "reason"] as const;

/** Variables each message may use (beyond those of our own default texts for it). */
function knownVariables(key: CustomerTemplateKey): string[] {
  const ours = LANGUAGES.flatMap((l) => variablesIn(`${TEMPLATES[key][l].title} ${TEMPLATES[key][l].body}`));
  const extra = key.startsWith("ticket.") || key === "review.request" || key === "inactivity.warning" ? TICKET_VARIABLES : [];
  return [...new Set([...ours, ...extra])].sort();
}

/** Variables a text of `key` must contain: without them the message cannot do its job. */
const REQUIRED: Partial<Record<CustomerTemplateKey, string[]>> = {
  "phone.code": ["otp"],
  "appointment.confirmed": ["time"],
  "appointment.rescheduled": ["time"],
  "appointment.reminder": ["time"],
  "appointment.cancelled": ["time"],
  "appointment.no_show": ["time"],
};

export interface TemplateVariables {
  allowed: string[];
  required: string[];
}

export function templateVariables(key: CustomerTemplateKey): TemplateVariables {
  const required = REQUIRED[key] ?? (key.startsWith("ticket.") ? ["code"] : []);
  return { allowed: knownVariables(key), required };
}

/** The `{name}` variables of a text, in order of first use. */
export function variablesIn(text: string): string[] {
  return [...new Set([...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!))];
}

export type TemplateProblem =
  | { field: "title" | "body"; kind: "unknown_variable"; variable: string; message: string }
  | { field: "body"; kind: "missing_variable"; variable: string; message: string }
  | { field: "title" | "body"; kind: "malformed"; message: string };

/** Why a business's text for `key` cannot be saved, or null when it can. */
export function templateProblem(key: CustomerTemplateKey, text: TemplateText): TemplateProblem | null {
  const { allowed, required } = templateVariables(key);
  for (const field of ["title", "body"] as const) {
    const value = text[field];
    // Optional clauses are [ … ]; a bracket left open would swallow or print the rest.
    if (/\[[^\]]*\[/.test(value) || (value.match(/\[/g)?.length ?? 0) !== (value.match(/\]/g)?.length ?? 0))
      return { field, kind: "malformed", message: "optional clauses are written [ … ], one level, every [ closed" };
    if (/\{(?!\w+\})|(?<!\{\w+)\}/.test(value))
      return { field, kind: "malformed", message: "variables are written {name}, every { closed" };
    const unknown = variablesIn(value).find((v) => !allowed.includes(v));
    if (unknown)
      return {
        field,
        kind: "unknown_variable",
        variable: unknown,
        message: `unknown variable {${unknown}}; this message knows ${allowed.map((v) => `{${v}}`).join(", ")}`,
      };
  }
  // A required variable must be outside an optional clause, so it is always printed; the title
  // counts, since an SMS reads `title: body` and a push shows both.
  const always = variablesIn(`${text.title} ${text.body}`.replace(/\[[^\]]*\]/g, ""));
  const missing = required.find((v) => !always.includes(v));
  if (missing)
    return {
      field: "body",
      kind: "missing_variable",
      variable: missing,
      message: `the title or the body must contain {${missing}} outside [ … ]`,
    };
  return null;
}

export interface SmsCost {
  encoding: "GSM-7" | "UCS-2";
  segments: number;
  characters: number;
  /** The characters that force UCS-2 (which halves what a segment holds). */
  nonGsmCharacters: string[];
}

/** An SMS reads `title: body`; a message without a title sends its body alone. */
export function smsText(text: { title: string; body: string }): string {
  return text.title ? `${text.title}: ${text.body}` : text.body;
}

/** What a text costs as an SMS: its encoding and segments, as the carriers count them. */
export function smsCost(text: string): SmsCost {
  const m = new SegmentedMessage(text);
  return {
    encoding: m.encodingName === "UCS-2" ? "UCS-2" : "GSM-7",
    segments: m.segmentsCount,
    characters: m.numberOfCharacters,
    nonGsmCharacters: m.getNonGsmCharacters(),
  };
}

/** A business's text for one message in one language, for the whole organization or one queue. */
export interface TemplateOverride {
  organizationId: string;
  key: string;
  language: string;
  queueId: string | null;
  title: string;
  body: string;
}

export type TemplateSource = "default" | "organization" | "queue";

/** The text a message is sent with: the queue's, else the organization's, else ours. */
export function effectiveTemplate(
  overrides: readonly TemplateOverride[],
  organizationId: string,
  key: TemplateKey,
  language: Language,
  queueId: string | null,
): TemplateText & { source: TemplateSource } {
  const mine = overrides.filter((o) => o.organizationId === organizationId && o.key === key && o.language === language);
  const forQueue = queueId ? mine.find((o) => o.queueId === queueId) : undefined;
  if (forQueue) return { title: forQueue.title, body: forQueue.body, source: "queue" };
  const forOrganization = mine.find((o) => o.queueId === null);
  if (forOrganization) return { title: forOrganization.title, body: forOrganization.body, source: "organization" };
  return { ...TEMPLATES[key][language], source: "default" };
}
