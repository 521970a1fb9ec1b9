import { parsePhoneNumberFromString } from "libphonenumber-js/mobile";

// What a customer's text means (docs/conversations.md). People answer from basic phones, in
// French or English, in any case, with or without accents, often with a word or two more
// ("ici merci", "Annuler svp"): the first word decides. Anything that is no keyword is a
// message for the staff.

export type Keyword = "here" | "late" | "cancel" | "status" | "stop" | "start" | "help";
export type Language = "fr" | "en";

const WORDS: Record<string, { keyword: Keyword; language: Language }> = {
  HERE: { keyword: "here", language: "en" },
  ICI: { keyword: "here", language: "fr" },
  LATE: { keyword: "late", language: "en" },
  RETARD: { keyword: "late", language: "fr" },
  CANCEL: { keyword: "cancel", language: "en" },
  ANNULER: { keyword: "cancel", language: "fr" },
  STATUS: { keyword: "status", language: "en" },
  STATUT: { keyword: "status", language: "fr" },
  STOP: { keyword: "stop", language: "en" },
  ARRET: { keyword: "stop", language: "fr" },
  START: { keyword: "start", language: "en" },
  HELP: { keyword: "help", language: "en" },
  AIDE: { keyword: "help", language: "fr" },
};

/** Upper case, accents and punctuation gone, spaces collapsed: "  arrêt ! " → "ARRET". */
export function normalizeText(text: string): string {
  return text
    .normalize("NFD")
    .replace(/\p{M}+/gu, "")
    .toUpperCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

export interface ReadText {
  keyword: Keyword | null;
  /** The language the keyword was written in; null for free text. */
  language: Language | null;
}

export function readKeyword(text: string): ReadText {
  const first = normalizeText(text).split(" ")[0] ?? "";
  const hit = WORDS[first];
  return hit ? { keyword: hit.keyword, language: hit.language } : { keyword: null, language: null };
}

/** "JOIN A", "REJOINDRE A": the words after a join verb, or null when the text is no join. */
export function joinRequest(text: string): string | null {
  const words = normalizeText(text).split(" ");
  if (words[0] !== "JOIN" && words[0] !== "REJOINDRE") return null;
  return words.slice(1).join(" ") || "";
}

/** Places a LATE moves the ticket back (the room's step-back, once per ticket). */
export const LATE_STEP_BACK_PLACES = 3;

type Values = { code?: string; position?: number | null; wait?: number | null; queue?: string; options?: string };

const REPLIES: Record<Language, Record<string, (v: Values) => string>> = {
  en: {
    here: (v) => `${v.code}: thank you, the staff know you are here.`,
    late: (v) => `${v.code}: noted, ${LATE_STEP_BACK_PLACES} people will pass before you.`,
    cancel: (v) => `${v.code}: your ticket is cancelled.`,
    status: (v) =>
      v.position ? `${v.code}: you are number ${v.position} in line, about ${v.wait ?? "?"} min.` : `${v.code}: you are being called.`,
    stop: () => "You will receive no more messages from us. Send START to receive them again.",
    start: () => "Messages are back on. Send STOP to stop them.",
    help: () =>
      "Reply HERE when you arrive, LATE to let 3 people pass, STATUS for your place, CANCEL to leave the line, STOP to stop messages.",
    unknownNumber: () => "We found no ticket for this number. Join a line at the counter or on our page, then reply HELP.",
    refused: (v) => `${v.code}: this cannot be done now (your ticket is no longer waiting).`,
    received: (v) => `${v.code}: your message was passed to the staff.`,
    choose: (v) => `You have tickets at several places. Reply with the number of the one you mean: ${v.options}`,
  },
  fr: {
    here: (v) => `${v.code} : merci, l'accueil sait que vous êtes là.`,
    late: (v) => `${v.code} : c'est noté, ${LATE_STEP_BACK_PLACES} personnes passeront avant vous.`,
    cancel: (v) => `${v.code} : votre ticket est annulé.`,
    status: (v) =>
      v.position ? `${v.code} : vous êtes n°${v.position} dans la file, environ ${v.wait ?? "?"} min.` : `${v.code} : vous êtes appelé(e).`,
    stop: () => "Vous ne recevrez plus de messages de notre part. Envoyez START pour les recevoir à nouveau.",
    start: () => "Les messages sont réactivés. Envoyez ARRET pour les arrêter.",
    help: () =>
      "Répondez ICI à votre arrivée, RETARD pour laisser passer 3 personnes, STATUT pour votre place, ANNULER pour quitter la file, ARRET pour ne plus recevoir de messages.",
    unknownNumber: () => "Aucun ticket pour ce numéro. Prenez un ticket à l'accueil ou sur notre page, puis répondez AIDE.",
    refused: (v) => `${v.code} : impossible pour le moment (votre ticket n'est plus en attente).`,
    received: (v) => `${v.code} : votre message a été transmis à l'accueil.`,
    choose: (v) => `Vous avez des tickets à plusieurs endroits. Répondez par le numéro de celui dont il s'agit : ${v.options}`,
  },
};

export type ReplyKey = keyof (typeof REPLIES)["en"];

export function replyText(language: Language, key: ReplyKey, values: Values = {}): string {
  return REPLIES[language][key]!(values);
}

/**
 * A sender we answer: a person's phone (mobile, or a number its plan cannot tell from one).
 * Short codes, premium-rate, shared-cost and toll-free senders are refused: answering them
 * costs the business, and no customer writes from one.
 */
export function isAnswerableSender(phone: string): boolean {
  if (!phone.startsWith("+")) return false;
  const parsed = parsePhoneNumberFromString(phone);
  if (!parsed || !parsed.isValid() || !parsed.country) return false;
  const type = parsed.getType();
  return type === "MOBILE" || type === "FIXED_LINE_OR_MOBILE";
}
