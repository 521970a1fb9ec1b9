// Notification texts, fr and en (spec §6 "Templates" plus the operator events of §6).
// A template is a title and a body with {placeholders}; a missing value drops the clause
// that needs it (written as [ ... {x} ... ]), so "position 4" never reads "position undefined".

export const LANGUAGES = ["fr", "en"] as const;
export type Language = (typeof LANGUAGES)[number];

export const TEMPLATE_KEYS = [
  "ticket.created",
  "ticket.almost_called",
  "ticket.called",
  "ticket.served",
  "ticket.cancelled",
  "ticket.skipped",
  "ticket.transferred",
  "ticket.expired",
  "ticket.recovered",
  "ticket.auto_skipped",
  "review.request",
  "inactivity.warning",
  "appointment.reminder",
  "appointment.confirmed",
  "appointment.rescheduled",
  "appointment.cancelled",
  "queue.status_changed",
  "queue.capacity_warning",
  "queue.long_wait",
  "ticket.no_show",
  "member.joined",
  "system.announcement",
  "ticket.recalled",
  "ticket.held",
  "ticket.resumed",
  "ticket.stepped_back",
  "phone.code",
] as const;
export type TemplateKey = (typeof TEMPLATE_KEYS)[number];

export interface TemplateText {
  title: string;
  body: string;
}

export const TEMPLATES: Record<TemplateKey, Record<Language, TemplateText>> = {
  "ticket.created": {
    fr: { title: "Ticket {code}", body: "Vous êtes en attente pour {queue}[, position {position}][, attente estimée {wait} min]." },
    en: { title: "Ticket {code}", body: "You are in line for {queue}[, position {position}][, estimated wait {wait} min]." },
  },
  "ticket.almost_called": {
    fr: { title: "Bientôt votre tour", body: "Ticket {code} : plus que {ahead} personne(s) avant vous pour {queue}." },
    en: { title: "Your turn is near", body: "Ticket {code}: {ahead} people ahead of you for {queue}." },
  },
  "ticket.called": {
    fr: { title: "C'est votre tour", body: "Ticket {code} : présentez-vous maintenant[ au {counter}] ({queue})." },
    en: { title: "It's your turn", body: "Ticket {code}: please come forward now[ to {counter}] ({queue})." },
  },
  "ticket.recalled": {
    fr: { title: "On vous attend", body: "Ticket {code} : présentez-vous maintenant[ au {counter}] ({queue})." },
    en: { title: "We are waiting for you", body: "Ticket {code}: please come forward now[ to {counter}] ({queue})." },
  },
  "ticket.held": {
    fr: { title: "Ticket en attente", body: "Ticket {code} mis en attente : le guichet vous rappellera ({queue})." },
    en: { title: "Ticket on hold", body: "Ticket {code} is on hold: the desk will call you back ({queue})." },
  },
  "ticket.resumed": {
    fr: { title: "On vous attend", body: "Ticket {code} : revenez maintenant[ au {counter}] ({queue})." },
    en: { title: "We are ready for you", body: "Ticket {code}: please come back now[ to {counter}] ({queue})." },
  },
  "ticket.stepped_back": {
    fr: {
      title: "Vous avez laissé passer",
      body: "Ticket {code} : vous êtes maintenant[ en position {position}] dans l'attente pour {queue}.",
    },
    en: { title: "You let others pass", body: "Ticket {code}: you are now[ at position {position}] in line for {queue}." },
  },
  "ticket.served": {
    fr: { title: "Merci de votre visite", body: "Ticket {code} servi ({queue})." },
    en: { title: "Thank you for your visit", body: "Ticket {code} served ({queue})." },
  },
  "ticket.cancelled": {
    fr: { title: "Ticket annulé", body: "Le ticket {code} ({queue}) est annulé." },
    en: { title: "Ticket cancelled", body: "Ticket {code} ({queue}) was cancelled." },
  },
  "ticket.skipped": {
    fr: { title: "Ticket passé", body: "Le ticket {code} ({queue}) a été passé[ : {reason}]." },
    en: { title: "Ticket skipped", body: "Ticket {code} ({queue}) was skipped[: {reason}]." },
  },
  "ticket.transferred": {
    fr: { title: "Ticket transféré", body: "Le ticket {code} a été transféré vers une autre file." },
    en: { title: "Ticket transferred", body: "Ticket {code} was transferred to another queue." },
  },
  "ticket.expired": {
    fr: { title: "Ticket expiré", body: "Le ticket {code} ({queue}) a expiré : vous ne vous êtes pas présenté à temps." },
    en: { title: "Ticket expired", body: "Ticket {code} ({queue}) expired: you did not come forward in time." },
  },
  "ticket.recovered": {
    fr: { title: "Ticket récupéré", body: "Votre ticket {code} est de nouveau en attente pour {queue}." },
    en: { title: "Ticket recovered", body: "Your ticket {code} is back in line for {queue}." },
  },
  "ticket.auto_skipped": {
    fr: { title: "Ticket passé automatiquement", body: "Le ticket {code} a été passé faute d'activité." },
    en: { title: "Ticket auto-skipped", body: "Ticket {code} was skipped for inactivity." },
  },
  "review.request": {
    fr: {
      title: "Votre avis compte",
      body: "Comment s'est passée votre visite ({queue}) ? Répondez par une note de 1 (mauvais) à 5 (excellent).",
    },
    en: { title: "How did we do?", body: "How was your visit ({queue})? Reply with a score from 1 (bad) to 5 (excellent)." },
  },
  "inactivity.warning": {
    fr: { title: "Êtes-vous toujours là ?", body: "Ticket {code} : sans nouvelle de votre position, il sera passé bientôt." },
    en: { title: "Are you still there?", body: "Ticket {code}: without a location update it will be skipped soon." },
  },
  "appointment.reminder": {
    fr: { title: "Rappel de rendez-vous", body: "{title} : {time}." },
    en: { title: "Appointment reminder", body: "{title}: {time}." },
  },
  "appointment.confirmed": {
    fr: { title: "Rendez-vous confirmé", body: "{title} : {time}.[ Gérer votre rendez-vous : {link}]" },
    en: { title: "Appointment confirmed", body: "{title}: {time}.[ Manage your appointment: {link}]" },
  },
  "appointment.rescheduled": {
    fr: { title: "Rendez-vous déplacé", body: "{title} : désormais {time}." },
    en: { title: "Appointment moved", body: "{title}: now {time}." },
  },
  "appointment.cancelled": {
    fr: { title: "Rendez-vous annulé", body: "{title} du {time} est annulé." },
    en: { title: "Appointment cancelled", body: "{title} on {time} is cancelled." },
  },
  "queue.status_changed": {
    fr: { title: "{queue}", body: "{queue} : statut passé de {from} à {to}." },
    en: { title: "{queue}", body: "{queue}: status went from {from} to {to}." },
  },
  "queue.capacity_warning": {
    fr: { title: "File {queue} presque pleine", body: "{used} places occupées sur {max}." },
    en: { title: "Queue {queue} nearly full", body: "{used} of {max} places taken." },
  },
  "queue.long_wait": {
    fr: { title: "Attente longue : {queue}", body: "Un nouveau client attend environ {wait} min (position {position})." },
    en: { title: "Long wait: {queue}", body: "A new customer faces about {wait} min (position {position})." },
  },
  "ticket.no_show": {
    fr: { title: "Absent : {code}", body: "Le ticket {code} ne s'est pas présenté ({queue})." },
    en: { title: "No-show: {code}", body: "Ticket {code} did not come forward ({queue})." },
  },
  "member.joined": {
    fr: { title: "Nouveau membre", body: "{name} a rejoint l'organisation ({role})." },
    en: { title: "New member", body: "{name} joined the organization ({role})." },
  },
  "system.announcement": {
    fr: { title: "Annonce", body: "{message}" },
    en: { title: "Announcement", body: "{message}" },
  },
  // The one-time code of a number (docs/limits.md): the code first, so a phone offers to fill it in.
  "phone.code": {
    fr: { title: "", body: "Votre code : {otp}. Il confirme votre numéro pour le ticket {code} ({queue}), valable 10 min." },
    en: { title: "", body: "Your code: {otp}. It confirms your number for ticket {code} ({queue}), valid for 10 min." },
  },
};

export type TemplateValues = Record<string, string | number | null | undefined>;

function fill(text: string, values: TemplateValues): string {
  const has = (name: string) => values[name] !== null && values[name] !== undefined && values[name] !== "";
  const optional = text.replace(/\[([^\]]*)\]/g, (_m, inner: string) => {
    const names = [...inner.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
    return names.every(has) ? inner : "";
  });
  return optional.replace(/\{(\w+)\}/g, (_m, name: string) => (has(name) ? String(values[name]) : "—"));
}

/** The title and body of `key` in `language`; `text` is the business's own when it has one. */
export function render(key: TemplateKey, language: Language, values: TemplateValues, text?: TemplateText): TemplateText {
  return renderText(text ?? TEMPLATES[key][language], values);
}

/** A title and body with their variables filled and their optional clauses kept or dropped. */
export function renderText(text: TemplateText, values: TemplateValues): TemplateText {
  return { title: fill(text.title, values), body: fill(text.body, values) };
}

/** The user's language, else the organization's default, else English (CONTRACT §7). */
export function pickLanguage(...candidates: (string | null | undefined)[]): Language {
  for (const c of candidates) if (c === "fr" || c === "en") return c;
  return "en";
}

/** An appointment's start in the attendee's language and the event's time zone. */
export function formatWhen(ms: number, language: Language, timeZone: string): string {
  return new Intl.DateTimeFormat(language === "fr" ? "fr-FR" : "en-GB", {
    dateStyle: "full",
    timeStyle: "short",
    timeZone,
  }).format(new Date(ms));
}
