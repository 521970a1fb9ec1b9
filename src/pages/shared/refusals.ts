// A join's refusal as a visitor (or a clerk) reads it: the API's code and the field at fault mapped
// to the page's words, never the API's English message on a French page.
import { ApiRefusal } from "./api";
import { languageMeta, pageWords, say, staffLang, type PageLang } from "./i18n";
import { intakeIssueText, type IntakeField } from "./intake";

/** What went wrong with a join, and which input it concerns (`phone`, `visitorName`, `intake.<key>`, or null). */
export function joinRefusal(err: unknown, lang: PageLang, fields: readonly IntakeField[] = []): { field: string | null; text: string } {
  const w = pageWords(lang).refusals;
  if (!(err instanceof ApiRefusal)) return { field: null, text: w.other };
  const field = typeof err.details.field === "string" ? err.details.field : null;
  const reason = typeof err.details.reason === "string" ? err.details.reason : "";
  if (field?.startsWith("intake.")) {
    const key = field.slice("intake.".length);
    const question = fields.find((f) => f.key === key);
    // The questions are written by the business in French and English.
    const staff = staffLang(lang);
    const what = question ? `${question.label[staff]}${staff === "fr" ? " : " : ": "}` : "";
    return { field, text: `${what}${intakeIssueText(question, reason, staff)}` };
  }
  if (field === "phone") return { field, text: err.status === 429 ? w.phoneCap : w.phone };
  if (field === "visitorName") return { field, text: w.name };
  if (field === "CF-Turnstile-Response") return { field: null, text: w.botCheck };
  switch (err.code) {
    case "QUEUE_PAUSED":
      return { field: null, text: w.paused };
    case "QUEUE_CLOSED":
      return { field: null, text: w.closed };
    case "QUEUE_FULL":
      return { field: null, text: w.full };
    case "API_RATE_LIMIT_EXCEEDED":
      return { field: null, text: w.tooMany };
    case "AUTHENTICATION_ERROR":
    case "AUTHORIZATION_ERROR":
    case "KEY_REVOKED":
    case "NOT_FOUND":
      return { field: null, text: w.notSetUp };
    case "NETWORK":
      return { field: null, text: w.network };
    default:
      return { field: null, text: w.other };
  }
}

/** A kiosk check-in's refusal (POST /v1/widget/locations/{id}/check-in, docs/blend.md) in the page's words. */
export function checkInRefusal(err: unknown, lang: PageLang, timeZone: string): string {
  const w = pageWords(lang).checkIn;
  if (!(err instanceof ApiRefusal)) return joinRefusal(err, lang).text;
  if (err.code === "CHECK_IN_NOT_OPEN" && typeof err.details.opensAt === "string") {
    const at = new Intl.DateTimeFormat(languageMeta(lang).locale, { timeZone, hour: "2-digit", minute: "2-digit" }).format(
      new Date(err.details.opensAt),
    );
    return say(w.notOpen, { time: lang === "fr" ? at.replace(":", " h ") : at });
  }
  if (err.code === "NOT_FOUND") return w.unknown;
  if (err.code === "VALIDATION_ERROR" && err.details.field === "code") return w.format;
  if (err.code === "INVALID_STATE") return err.details.status === "cancelled" ? w.cancelled : w.missed;
  return joinRefusal(err, lang).text;
}
