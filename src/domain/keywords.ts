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

/** A queue's join keyword: one word of 2–20 letters or digits, starting with a letter, no reserved word. */
export const SMS_KEYWORD_PATTERN = /^[A-Z][A-Z0-9]{1,19}$/;

/**
 * The keyword as it is stored and matched (upper case, accents gone), or the reason it cannot be one:
 * the words that act on a ticket and the join verbs are taken, and a digit first would read as a menu answer.
 */
export function smsKeywordOf(text: string): { keyword: string } | { refused: string } {
  const keyword = normalizeText(text);
  if (!SMS_KEYWORD_PATTERN.test(keyword)) return { refused: "one word of 2-20 letters or digits, starting with a letter" };
  if (WORDS[keyword] || keyword === "JOIN" || keyword === "REJOINDRE") return { refused: `${keyword} is a reserved keyword` };
  return { keyword };
}

/** The join keyword a text names: its first word, or the word after JOIN/REJOINDRE ("JOIN MAIRIE"). */
export function keywordOfText(text: string): string | null {
  const asked = joinRequest(text);
  const word = (asked ?? normalizeText(text)).split(" ")[0] ?? "";
  return SMS_KEYWORD_PATTERN.test(word) ? word : null;
}

/** Places a LATE moves the ticket back (the room's step-back, once per ticket). */
export const LATE_STEP_BACK_PLACES = 3;

/**
 * "RETARD 15", "late 15 min": the minutes after the keyword (a later turn, docs/visits.md, defer),
 * or null when the text gives none (a bare LATE steps back LATE_STEP_BACK_PLACES places).
 */
export function lateMinutes(text: string): number | null {
  const minutes = /^\d{1,4}$/.exec(normalizeText(text).split(" ")[1] ?? "");
  if (!minutes) return null;
  const n = Number(minutes[0]);
  return n > 0 ? n : null;
}

type Values = {
  code?: string;
  position?: number | null;
  wait?: number | null;
  queue?: string;
  options?: string;
  minutes?: number;
  max?: number;
  score?: number;
  reason?: string;
};

const REPLIES: Record<Language, Record<string, (v: Values) => string>> = {
  en: {
    here: (v) => `${v.code}: thank you, the staff know you are here.`,
    late: (v) => `${v.code}: noted, ${LATE_STEP_BACK_PLACES} people will pass before you.`,
    deferred: (v) => `${v.code}: noted, we will not call you in the next ${v.minutes} min. Your turn in about ${v.wait ?? "?"} min.`,
    deferTooFar: (v) => `${v.code}: we can hold your turn for ${v.max} min at most. Reply LATE ${v.max} or less.`,
    cancel: (v) => `${v.code}: your ticket is cancelled.`,
    status: (v) =>
      v.position ? `${v.code}: you are number ${v.position} in line, about ${v.wait ?? "?"} min.` : `${v.code}: you are being called.`,
    stop: () => "You will receive no more messages from us. Send START to receive them again.",
    start: () => "Messages are back on. Send STOP to stop them.",
    help: () =>
      "Reply HERE when you arrive, LATE to let 3 people pass (LATE 15: call me in 15 min at the earliest), STATUS for your place, CANCEL to leave the line, STOP to stop messages.",
    unknownNumber: () => "We found no ticket for this number. Join a line at the counter or on our page, then reply HELP.",
    refused: (v) => `${v.code}: this cannot be done now (your ticket is no longer waiting).`,
    received: (v) => `${v.code}: your message was passed to the staff.`,
    choose: (v) => `You have tickets at several places. Reply with the number of the one you mean: ${v.options}`,
    feedback: (v) => `${v.code}: thank you for your score (${v.score}/5).`,
    feedbackAlready: (v) => `${v.code}: your score was noted already. Thank you!`,
    joined: (v) =>
      `${v.queue}: your ticket is ${v.code}, number ${v.position ?? "?"} in line, about ${v.wait ?? "?"} min. Reply HERE when you arrive, CANCEL to leave.`,
    joinRefused: (v) => `${v.queue}: no ticket could be taken now (${v.reason}).`,
  },
  fr: {
    here: (v) => `${v.code} : merci, l'accueil sait que vous êtes là.`,
    late: (v) => `${v.code} : c'est noté, ${LATE_STEP_BACK_PLACES} personnes passeront avant vous.`,
    deferred: (v) =>
      `${v.code} : c'est noté, nous ne vous appellerons pas avant ${v.minutes} min. Votre tour dans environ ${v.wait ?? "?"} min.`,
    deferTooFar: (v) => `${v.code} : nous pouvons décaler votre tour de ${v.max} min au plus. Répondez RETARD ${v.max} ou moins.`,
    cancel: (v) => `${v.code} : votre ticket est annulé.`,
    status: (v) =>
      v.position ? `${v.code} : vous êtes n°${v.position} dans la file, environ ${v.wait ?? "?"} min.` : `${v.code} : vous êtes appelé(e).`,
    stop: () => "Vous ne recevrez plus de messages de notre part. Envoyez START pour les recevoir à nouveau.",
    start: () => "Les messages sont réactivés. Envoyez ARRET pour les arrêter.",
    help: () =>
      "Répondez ICI à votre arrivée, RETARD pour laisser passer 3 personnes (RETARD 15 : pas avant 15 min), STATUT pour votre place, ANNULER pour quitter la file, ARRET pour ne plus recevoir de messages.",
    unknownNumber: () => "Aucun ticket pour ce numéro. Prenez un ticket à l'accueil ou sur notre page, puis répondez AIDE.",
    refused: (v) => `${v.code} : impossible pour le moment (votre ticket n'est plus en attente).`,
    received: (v) => `${v.code} : votre message a été transmis à l'accueil.`,
    choose: (v) => `Vous avez des tickets à plusieurs endroits. Répondez par le numéro de celui dont il s'agit : ${v.options}`,
    feedback: (v) => `${v.code} : merci pour votre note (${v.score}/5).`,
    feedbackAlready: (v) => `${v.code} : votre note est déjà enregistrée. Merci !`,
    joined: (v) =>
      `${v.queue} : votre ticket est ${v.code}, n°${v.position ?? "?"} dans la file, environ ${v.wait ?? "?"} min. Répondez ICI à votre arrivée, ANNULER pour partir.`,
    joinRefused: (v) => `${v.queue} : impossible de prendre un ticket pour le moment (${v.reason}).`,
  },
};

const REFUSALS: Record<Language, Record<string, string>> = {
  en: {
    QUEUE_FULL: "the line is full",
    QUEUE_PAUSED: "the line is paused",
    QUEUE_CLOSED: "the line is closed",
    QUOTA_EXCEEDED: "no more tickets this month",
    API_RATE_LIMIT_EXCEEDED: "too many tickets for this number today",
    other: "try again later",
  },
  fr: {
    QUEUE_FULL: "la file est complète",
    QUEUE_PAUSED: "la file est en pause",
    QUEUE_CLOSED: "la file est fermée",
    QUOTA_EXCEEDED: "plus de tickets ce mois-ci",
    API_RATE_LIMIT_EXCEEDED: "trop de tickets pour ce numéro aujourd'hui",
    other: "réessayez plus tard",
  },
};

/** Why a join by text or USSD was refused, in a few words (the join's error code). */
export function joinRefusalText(language: Language, code: string): string {
  return REFUSALS[language][code] ?? REFUSALS[language].other!;
}

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
