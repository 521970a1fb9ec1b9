import { parsePhoneNumberFromString } from "libphonenumber-js/mobile";

import { CATALOGUES, fillText, LANGUAGES, type Keyword, type Language, type ReplyKey } from "./languages";

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

const JOIN_VERBS = new Set(LANGUAGES.flatMap((language) => CATALOGUES[language].sms.join.map(normalizeText)));

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

/** Places a LATE moves the ticket back (the room's step-back, once per ticket). */
export const LATE_STEP_BACK_PLACES = 3;

type Values = { code?: string; position?: number | null; wait?: number | null; queue?: string; options?: string };

export function replyText(language: Language, key: ReplyKey, values: Values = {}): string {
  const reply = key === "status" && !values.position ? "statusCalled" : key;
  return fillText(CATALOGUES[language].sms.replies[reply], { ...values, wait: values.wait ?? "?", places: LATE_STEP_BACK_PLACES });
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
