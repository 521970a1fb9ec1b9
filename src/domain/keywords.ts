import { parsePhoneNumberFromString } from "libphonenumber-js/mobile";

import { CATALOGUES, fillText, LANGUAGES, type JoinRefusalKey, type Keyword, type Language, type ReplyKey } from "./languages";

// What a customer's text means (docs/conversations.md). People answer from basic phones, in
// any language of the catalogue (./languages, `sms.keywords`), in any case, with or without
// accents, often with a word or two more ("ici merci", "Cancelar por favor"): the first word
// decides. Anything that is no keyword is a message for the staff.

export type { Keyword, Language, ReplyKey };

/** Each word, normalized, with its keyword and the languages that use it (AQUI is Spanish and Portuguese). */
const WORDS = new Map<string, { keyword: Keyword; languages: Language[] }>();
for (const language of LANGUAGES) {
  for (const [keyword, words] of Object.entries(CATALOGUES[language].sms.keywords) as [Keyword, readonly string[]][]) {
    for (const word of words) {
      const key = normalizeText(word);
      const hit = WORDS.get(key);
      if (hit) hit.languages.push(language);
      else WORDS.set(key, { keyword, languages: [language] });
    }
  }
}

/** Each join verb, normalized, with the languages that use it. */
const JOIN_VERBS = new Map<string, Language[]>();
for (const language of LANGUAGES) {
  for (const verb of CATALOGUES[language].sms.join.map(normalizeText)) JOIN_VERBS.set(verb, [...(JOIN_VERBS.get(verb) ?? []), language]);
}

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
  /** The language the keyword was written in (the catalogue's first when several share it); null for free text. */
  language: Language | null;
  /** Every language that has this word. */
  languages: Language[];
}

export function readKeyword(text: string): ReadText {
  const first = normalizeText(text).split(" ")[0] ?? "";
  const hit = WORDS.get(first);
  return hit
    ? { keyword: hit.keyword, language: hit.languages[0]!, languages: hit.languages }
    : { keyword: null, language: null, languages: [] };
}

/** "JOIN A", "REJOINDRE A": the words after a join verb, or null when the text is no join. */
export function joinRequest(text: string): string | null {
  const words = normalizeText(text).split(" ");
  if (!JOIN_VERBS.has(words[0] ?? "")) return null;
  return words.slice(1).join(" ") || "";
}

/** The word that asks for one's place in `language` (STATUT, STATUS, ESTADO…). */
export function statusWord(language: Language): string {
  return CATALOGUES[language].sms.keywords.status[0] ?? "STATUS";
}

/** The languages whose join verb starts the text ("REJOINDRE A": fr), none when it starts with no join verb. */
export function joinLanguages(text: string): Language[] {
  return JOIN_VERBS.get(normalizeText(text).split(" ")[0] ?? "") ?? [];
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
  if (WORDS.has(keyword) || JOIN_VERBS.has(keyword)) return { refused: `${keyword} is a reserved keyword` };
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

/** Why a join by text or USSD was refused, in a few words (the join's error code; the catalogue's `sms.joinRefusals`). */
export function joinRefusalText(language: Language, code: string): string {
  const refusals = CATALOGUES[language].sms.joinRefusals;
  return Object.hasOwn(refusals, code) ? refusals[code as JoinRefusalKey] : refusals.other;
}

export function replyText(language: Language, key: ReplyKey, values: Values = {}): string {
  const reply = key === "status" && !values.position ? "statusCalled" : key;
  return fillText(CATALOGUES[language].sms.replies[reply], {
    ...values,
    position: values.position ?? "?",
    wait: values.wait ?? "?",
    places: LATE_STEP_BACK_PLACES,
  });
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
