// A join's refusal as a visitor (or a clerk) reads it: the API's code and the field at fault mapped
// to the page's words, never the API's English message on a French page.
import { ApiRefusal } from "./api";
import type { Lang } from "./i18n";
import { intakeIssueText, type IntakeField } from "./intake";

const WORDS = {
  en: {
    phone: "This number cannot receive our texts: enter a mobile number in international format, e.g. +33 6 12 34 56 78.",
    phoneCap: "This number has had its tickets with text messages for today: take a ticket without a phone number.",
    botCheck: "Please try again in a moment.",
    name: "Please check the name: letters, digits and spaces only.",
    paused: "This service is paused: no new tickets for a moment.",
    closed: "This service is closed for today.",
    full: "This service is full for now: please ask at the desk.",
    tooMany: "Too many requests: please try again in a moment.",
    notSetUp: "This kiosk is not set up correctly: please ask at the desk.",
    network: "The service cannot be reached: please try again, or ask at the desk.",
    other: "Your ticket could not be issued: please ask at the desk.",
  },
  fr: {
    phone: "Ce numéro ne peut pas recevoir nos SMS : saisissez un numéro de mobile au format international, par ex. +33 6 12 34 56 78.",
    phoneCap: "Ce numéro a déjà eu ses tickets avec SMS aujourd'hui : prenez un ticket sans numéro de téléphone.",
    botCheck: "Merci de réessayer dans un instant.",
    name: "Merci de vérifier le nom : lettres, chiffres et espaces seulement.",
    paused: "Ce service est en pause : pas de nouveaux tickets pour le moment.",
    closed: "Ce service est fermé pour aujourd'hui.",
    full: "Ce service est complet pour le moment : merci de vous adresser à l'accueil.",
    tooMany: "Trop de demandes : merci de réessayer dans un instant.",
    notSetUp: "Cette borne n'est pas bien configurée : merci de vous adresser à l'accueil.",
    network: "Le service est injoignable : réessayez, ou adressez-vous à l'accueil.",
    other: "Votre ticket n'a pas pu être délivré : merci de vous adresser à l'accueil.",
  },
};

/** What went wrong with a join, and which input it concerns (`phone`, `visitorName`, `intake.<key>`, or null). */
export function joinRefusal(err: unknown, lang: Lang, fields: readonly IntakeField[] = []): { field: string | null; text: string } {
  const w = WORDS[lang];
  if (!(err instanceof ApiRefusal)) return { field: null, text: w.other };
  const field = typeof err.details.field === "string" ? err.details.field : null;
  const reason = typeof err.details.reason === "string" ? err.details.reason : "";
  if (field?.startsWith("intake.")) {
    const key = field.slice("intake.".length);
    const question = fields.find((f) => f.key === key);
    const what = question ? `${question.label[lang]}${lang === "fr" ? " : " : ": "}` : "";
    return { field, text: `${what}${intakeIssueText(question, reason, lang)}` };
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

const CHECK_IN_WORDS = {
  en: {
    notOpen: (at: string) => `Check-in for this appointment opens at ${at}. Please come back then, or ask at the desk.`,
    unknown: "This code is not known here today: check it on your confirmation, or ask at the desk.",
    cancelled: "This appointment was cancelled: please ask at the desk.",
    missed: "This appointment has passed: please ask at the desk.",
    format: "The code has 6 letters and digits, as on your confirmation.",
  },
  fr: {
    notOpen: (at: string) =>
      `L'arrivée pour ce rendez-vous ouvre à ${at}. Merci de revenir à cette heure, ou de vous adresser à l'accueil.`,
    unknown: "Ce code n'est pas connu ici aujourd'hui : vérifiez-le sur votre confirmation, ou adressez-vous à l'accueil.",
    cancelled: "Ce rendez-vous a été annulé : merci de vous adresser à l'accueil.",
    missed: "L'heure de ce rendez-vous est passée : merci de vous adresser à l'accueil.",
    format: "Le code a 6 lettres et chiffres, comme sur votre confirmation.",
  },
};

/** A kiosk check-in's refusal (POST /v1/widget/locations/{id}/check-in, docs/blend.md) in the page's words. */
export function checkInRefusal(err: unknown, lang: Lang, timeZone: string): string {
  const w = CHECK_IN_WORDS[lang];
  if (!(err instanceof ApiRefusal)) return joinRefusal(err, lang).text;
  if (err.code === "CHECK_IN_NOT_OPEN" && typeof err.details.opensAt === "string") {
    const at = new Intl.DateTimeFormat(lang === "fr" ? "fr-FR" : "en-GB", { timeZone, hour: "2-digit", minute: "2-digit" }).format(
      new Date(err.details.opensAt),
    );
    return w.notOpen(lang === "fr" ? at.replace(":", " h ") : at);
  }
  if (err.code === "NOT_FOUND") return w.unknown;
  if (err.code === "VALIDATION_ERROR" && err.details.field === "code") return w.format;
  if (err.code === "INVALID_STATE") return err.details.status === "cancelled" ? w.cancelled : w.missed;
  return joinRefusal(err, lang).text;
}
