// "Add a walk-in" (W): the queue, the customer's name and mobile (optional: the only way a walk-in
// is texted), the customer's language (issue 42: among those the organization offers, the branch's
// default first; never the console's own), and the service's join-time questions, checked by the
// API's rules before sending.
import { useState } from "hono/jsx/dom";
/** A queue the walk-in may join. */
export type QueueChoice = { id: string; name: string; serviceId: string };
import { languageMeta, type PageLang } from "../shared/i18n";
import { askedAtJoin, checkAnswers, IntakeInputs, readAnswers, type IntakeErrors, type IntakeField } from "../shared/intake";
import type { ConsoleText } from "./i18n";

/** The languages a walk-in may be given: the organization's offered ones, and the branch's default, chosen at first. */
export type VisitorLanguages = { offered: PageLang[]; preset: PageLang };

export interface WalkIn {
  queueId: string;
  vip: boolean;
  body: { visitorName?: string; phone?: string; intake?: Record<string, string | number | boolean>; language: PageLang };
}

/** What the API refused, by input: `phone`, `visitorName`, `intake.<key>`, or null for the form as a whole. */
export type WalkInRefusal = { field: string | null; text: string } | null;

const PHONE = /^\+[1-9]\d{6,14}$/;

export function WalkInForm(p: {
  t: ConsoleText;
  lang: PageLang;
  queues: QueueChoice[];
  visitor: VisitorLanguages;
  /** Null while they are being read: the form shows, and cannot be sent yet. */
  questions: Record<string, IntakeField[]> | null;
  onCancel: () => void;
  onSubmit: (walkIn: WalkIn) => Promise<WalkInRefusal>;
}) {
  const { t, lang } = p;
  const [picked, setQueueId] = useState(p.queues[0]?.id ?? "");
  // The dialog may open before the desk's queues are read (a quick "W"): until the clerk picks
  // one, the desk's first queue is the walk-in's, whenever the list arrives.
  const queueId = p.queues.some((q) => q.id === picked) ? picked : (p.queues[0]?.id ?? "");
  const [errors, setErrors] = useState<IntakeErrors>({});
  const [phoneError, setPhoneError] = useState<string | null>(null);
  const [formError, setFormError] = useState<string | null>(null);
  const [sending, setSending] = useState(false);
  const serviceId = p.queues.find((q) => q.id === queueId)?.serviceId ?? "";
  const fields = askedAtJoin(p.questions?.[serviceId] ?? []);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (sending || p.questions === null || !queueId) return;
    const form = e.target as HTMLFormElement;
    const data = new FormData(form);
    const visitorName = String(data.get("name") ?? "").trim();
    const phone = String(data.get("phone") ?? "").replace(/[\s.()-]/g, "");
    const intake = readAnswers(form, fields);
    const problems = checkAnswers(fields, intake, lang);
    const badPhone = phone !== "" && !PHONE.test(phone) ? t.walkInPhoneBad : null;
    setErrors(problems);
    setPhoneError(badPhone);
    setFormError(null);
    if (badPhone || Object.keys(problems).length > 0) return;
    setSending(true);
    const refused = await p.onSubmit({
      queueId,
      vip: data.get("vip") === "on",
      body: {
        ...(visitorName ? { visitorName } : {}),
        ...(phone ? { phone } : {}),
        ...(Object.keys(intake).length > 0 ? { intake } : {}),
        language: p.visitor.offered.find((code) => code === data.get("language")) ?? p.visitor.preset,
      },
    });
    setSending(false);
    if (!refused) return;
    if (refused.field === "phone") setPhoneError(refused.text);
    else if (refused.field?.startsWith("intake.")) setErrors({ [refused.field.slice("intake.".length)]: refused.text });
    else setFormError(refused.text);
  };

  return (
    <form onSubmit={submit} noValidate>
      <label>
        {t.targetQueue}
        <select name="queue" required value={queueId} onChange={(e: Event) => setQueueId((e.target as HTMLSelectElement).value)}>
          {p.queues.map((q) => (
            <option value={q.id}>{q.name}</option>
          ))}
        </select>
      </label>
      <label>
        {t.visitorName}
        <input name="name" maxLength={100} autocomplete="off" />
      </label>
      <label>
        {t.walkInPhone}
        <input
          name="phone"
          type="tel"
          inputMode="tel"
          autocomplete="off"
          aria-invalid={phoneError ? "true" : undefined}
          aria-describedby={phoneError ? "walkin-phone-error" : "walkin-phone-hint"}
        />
        {phoneError ? (
          <span class="field-error" id="walkin-phone-error">
            {phoneError}
          </span>
        ) : (
          <span class="hint" id="walkin-phone-hint">
            {t.walkInPhoneHint}
          </span>
        )}
      </label>
      <label>
        {t.walkInLanguage}
        <select name="language" data-visitor-language>
          {p.visitor.offered.map((code) => (
            <option value={code} lang={code} selected={code === p.visitor.preset}>
              {languageMeta(code).name}
            </option>
          ))}
        </select>
      </label>
      <IntakeInputs fields={fields} lang={lang} errors={errors} idPrefix="walkin" />
      <label class="check">
        <input type="checkbox" name="vip" /> {t.asVip}
      </label>
      {formError && (
        <p class="notice error" role="alert">
          {formError}
        </p>
      )}
      <div class="actions">
        <button type="button" onClick={p.onCancel}>
          {t.cancel}
        </button>
        <button class="primary" type="submit" disabled={sending || p.questions === null || !queueId}>
          {t.addTicket}
        </button>
      </div>
    </form>
  );
}
