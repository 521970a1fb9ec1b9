import { and, eq, inArray } from "drizzle-orm";
import { messageTemplates, queues } from "../db/schema";
import {
  CUSTOMER_TEMPLATE_KEYS,
  effectiveTemplate,
  smsCost,
  smsText,
  templateProblem,
  templateVariables,
  type CustomerTemplateKey,
  type SmsCost,
  type TemplateOverride,
  type TemplateSource,
} from "../domain/message-templates";
import { LANGUAGES, renderText, type Language, type TemplateText } from "../domain/notification-templates";
import { notFound, validationError } from "../http/errors";
import type { Deps } from "../http/deps";

// The business's own words (docs/message-templates.md): its texts per organization and per
// queue, read by every sender through `templateOverrides` and saved only when the variables
// they use are ones the sender fills.

/** Every override of these organizations, in one read (a batch of notifications shares it). */
export async function templateOverrides({ db }: Deps, organizationIds: readonly string[]): Promise<TemplateOverride[]> {
  if (organizationIds.length === 0) return [];
  const rows = await db
    .select()
    .from(messageTemplates)
    .where(inArray(messageTemplates.organizationId, [...new Set(organizationIds)]))
    .all();
  return rows.map((r) => ({
    organizationId: r.organizationId,
    key: r.key,
    language: r.language,
    queueId: r.queueScope === "" ? null : r.queueScope,
    title: r.title,
    body: r.body,
  }));
}

export interface MessageTemplateView {
  key: CustomerTemplateKey;
  language: Language;
  queueId: string | null;
  source: TemplateSource;
  title: string;
  body: string;
  variables: string[];
  requiredVariables: string[];
  sms: SmsCost;
}

/** A queue of the organization, or the 404 naming the field. */
async function checkQueue({ db }: Deps, organizationId: string, queueId: string | null): Promise<void> {
  if (queueId === null) return;
  const row = await db
    .select({ id: queues.id })
    .from(queues)
    .where(and(eq(queues.id, queueId), eq(queues.organizationId, organizationId)))
    .get();
  if (!row) throw notFound("Queue");
}

function view(
  overrides: readonly TemplateOverride[],
  organizationId: string,
  key: CustomerTemplateKey,
  language: Language,
  queueId: string | null,
): MessageTemplateView {
  const text = effectiveTemplate(overrides, organizationId, key, language, queueId);
  const { allowed, required } = templateVariables(key);
  return {
    key,
    language,
    queueId,
    source: text.source,
    title: text.title,
    body: text.body,
    variables: allowed,
    requiredVariables: required,
    sms: smsCost(smsText(text)),
  };
}

/** The texts in force for the organization (or one queue), every message and language. */
export async function listMessageTemplates(
  deps: Deps,
  organizationId: string,
  filter: { queueId: string | null; language: Language | null; key: CustomerTemplateKey | null },
): Promise<MessageTemplateView[]> {
  await checkQueue(deps, organizationId, filter.queueId);
  const overrides = await templateOverrides(deps, [organizationId]);
  const languages = filter.language ? [filter.language] : [...LANGUAGES];
  const keys = filter.key ? [filter.key] : [...CUSTOMER_TEMPLATE_KEYS];
  return keys.flatMap((key) => languages.map((language) => view(overrides, organizationId, key, language, filter.queueId)));
}

/** The refusal of a text that cannot be saved: a 400 naming the field and the variable. */
function checkText(key: CustomerTemplateKey, text: TemplateText): void {
  const problem = templateProblem(key, text);
  if (problem) throw validationError(problem.field, problem.message, problem.kind === "malformed" ? {} : { variable: problem.variable });
}

export async function saveMessageTemplate(
  deps: Deps,
  organizationId: string,
  key: CustomerTemplateKey,
  input: { language: Language; queueId: string | null; title: string; body: string },
  at: number,
): Promise<MessageTemplateView> {
  const { db } = deps;
  checkText(key, input);
  await checkQueue(deps, organizationId, input.queueId);
  const row = {
    organizationId,
    queueScope: input.queueId ?? "",
    key,
    language: input.language,
    title: input.title,
    body: input.body,
    updatedAt: at,
  };
  await db
    .insert(messageTemplates)
    .values(row)
    .onConflictDoUpdate({
      target: [messageTemplates.organizationId, messageTemplates.queueScope, messageTemplates.key, messageTemplates.language],
      set: { title: row.title, body: row.body, updatedAt: at },
    })
    .run();
  return view(await templateOverrides(deps, [organizationId]), organizationId, key, input.language, input.queueId);
}

/** Puts a message back to the organization's text (for a queue) or ours (for the organization). */
export async function resetMessageTemplate(
  deps: Deps,
  organizationId: string,
  key: CustomerTemplateKey,
  input: { language: Language; queueId: string | null },
): Promise<MessageTemplateView> {
  const { db } = deps;
  await checkQueue(deps, organizationId, input.queueId);
  await db
    .delete(messageTemplates)
    .where(
      and(
        eq(messageTemplates.organizationId, organizationId),
        eq(messageTemplates.queueScope, input.queueId ?? ""),
        eq(messageTemplates.key, key),
        eq(messageTemplates.language, input.language),
      ),
    )
    .run();
  return view(await templateOverrides(deps, [organizationId]), organizationId, key, input.language, input.queueId);
}

/** A sample ticket's values: what the preview fills a text with. */
export const SAMPLE_VALUES = {
  code: "A012",
  position: 3,
  ahead: 2,
  wait: 12,
  counter: "Guichet 2",
  reason: "absent",
  otp: "482913",
  title: "Rendez-vous",
  time: "lundi 7 décembre 2026 à 10:30",
  link: "https://example.com/appointments/apt_123#token=…",
} as const;

/**
 * A text rendered for a sample ticket of the queue (or a sample queue), as the customer would
 * receive it; the text given, else the one in force. The queue's real name fills {queue}.
 */
export async function previewMessageTemplate(
  deps: Deps,
  organizationId: string,
  key: CustomerTemplateKey,
  input: { language: Language; queueId: string | null; title?: string; body?: string },
): Promise<{ title: string; body: string; smsText: string; sms: SmsCost; source: TemplateSource | "draft" }> {
  const { db } = deps;
  let queueName = "Accueil";
  if (input.queueId !== null) {
    const row = await db
      .select({ name: queues.name })
      .from(queues)
      .where(and(eq(queues.id, input.queueId), eq(queues.organizationId, organizationId)))
      .get();
    if (!row) throw notFound("Queue");
    queueName = row.name;
  }
  const inForce = effectiveTemplate(await templateOverrides(deps, [organizationId]), organizationId, key, input.language, input.queueId);
  const draft = input.title !== undefined || input.body !== undefined;
  const text = { title: input.title ?? inForce.title, body: input.body ?? inForce.body };
  if (draft) checkText(key, text);
  const rendered = renderText(text, { ...SAMPLE_VALUES, queue: queueName });
  const sms = smsText(rendered);
  return { ...rendered, smsText: sms, sms: smsCost(sms), source: draft ? "draft" : inForce.source };
}

/** The text one message is sent with: the queue's, else the organization's, else ours. */
export async function businessText(
  deps: Deps,
  organizationId: string,
  queueId: string | null,
  key: CustomerTemplateKey,
  language: Language,
): Promise<TemplateText> {
  const { title, body } = effectiveTemplate(await templateOverrides(deps, [organizationId]), organizationId, key, language, queueId);
  return { title, body };
}
