// Notification texts in every language of the catalogue (./languages, one file per language):
// spec §6 "Templates" plus the operator events of §6. A template is a title and a body with
// {placeholders}; a missing value drops the clause that needs it (written as [ ... {x} ... ]), so
// "position 4" never reads "position undefined".
import {
  CATALOGUES,
  fillText,
  isLanguage,
  LANGUAGES,
  TEMPLATE_KEYS,
  type Language,
  type TemplateKey,
  type TemplateText,
} from "./languages";

export { LANGUAGES, TEMPLATE_KEYS, type Language, type TemplateKey, type TemplateText };

export const TEMPLATES: Record<TemplateKey, Record<Language, TemplateText>> = Object.fromEntries(
  TEMPLATE_KEYS.map((key) => [key, Object.fromEntries(LANGUAGES.map((language) => [language, CATALOGUES[language].messages[key]]))]),
) as Record<TemplateKey, Record<Language, TemplateText>>;

export type TemplateValues = Record<string, string | number | null | undefined>;

/** The title and body of `key` in `language`; `text` is the business's own when it has one. */
export function render(key: TemplateKey, language: Language, values: TemplateValues, text?: TemplateText): TemplateText {
  return renderText(text ?? TEMPLATES[key][language], values);
}

/** A title and body with their variables filled and their optional clauses kept or dropped. */
export function renderText(text: TemplateText, values: TemplateValues): TemplateText {
  return { title: fillText(text.title, values), body: fillText(text.body, values) };
}

/** The first candidate the catalogue speaks (the ticket's, the user's, the organization's…), else English (CONTRACT §7). */
export function pickLanguage(...candidates: (string | null | undefined)[]): Language {
  for (const c of candidates) if (isLanguage(c)) return c;
  return "en";
}

/** An appointment's start in the attendee's language and the event's time zone. */
export function formatWhen(ms: number, language: Language, timeZone: string): string {
  return new Intl.DateTimeFormat(CATALOGUES[language].meta.locale, {
    dateStyle: "full",
    timeStyle: "short",
    timeZone,
  }).format(new Date(ms));
}
