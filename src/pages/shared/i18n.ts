// The pages' languages: every language of the catalogue (src/domain/languages, `PageLang`). The
// public pages (kiosk, status page) choose from the query, this browser's last choice, the browser,
// else the location's default; the staff pages (console, floor) from the query, the last choice,
// the browser, then once signed in the user's own language (`signedInLang`). `Lang` (French or
// English) is left for staff-written words (intake questions), which exist in those two only.
import { fillText, type LanguageMeta, type PageStrings } from "../../domain/languages/catalogue";
import { PAGE_LANGUAGES } from "../../domain/languages/pages.generated";
import type { Language } from "../../domain/languages";

export type Lang = "fr" | "en";
export type PageLang = Language;

const isLang = (value: string | null | undefined): value is Lang => value === "fr" || value === "en";
const isPageLang = (value: string | null | undefined): value is PageLang => !!value && Object.hasOwn(PAGE_LANGUAGES, value);

/** A staff page's language before sign-in: the query, the last choice, the browser, else English. */
export const staffPageLang = (): PageLang => visitorLang() ?? "en";

/** A staff page's language once signed in: the query, else the last choice on this browser, else the user's own, else English. */
export function signedInLang(userLanguage: string | null | undefined): PageLang {
  const asked = new URLSearchParams(location.search).get("lang");
  if (isPageLang(asked)) return asked;
  const stored = localStorage.getItem("pages:lang");
  if (isPageLang(stored)) return stored;
  return isPageLang(userLanguage) ? userLanguage : "en";
}

/** The visitor's language among those the page offers: the query, the last choice, the browser; null: none of them. */
export function visitorLang(offered: readonly string[] = Object.keys(PAGE_LANGUAGES)): PageLang | null {
  const ok = (value: string | null | undefined): value is PageLang => isPageLang(value) && offered.includes(value);
  const fromQuery = new URLSearchParams(location.search).get("lang");
  if (ok(fromQuery)) return fromQuery;
  const stored = localStorage.getItem("pages:lang");
  if (ok(stored)) return stored;
  const browser = (navigator.language || "").slice(0, 2).toLowerCase();
  return ok(browser) ? browser : null;
}

/** Whether the visitor (the query or an earlier switch) chose the language, rather than the browser. */
export const langChosen = () => !!new URLSearchParams(location.search).get("lang") || !!localStorage.getItem("pages:lang");

export function rememberLang(lang: PageLang): void {
  localStorage.setItem("pages:lang", lang);
  showLang(lang);
}

/** The document's language and direction (Arabic right to left). */
export function showLang(lang: PageLang): void {
  document.documentElement.lang = lang;
  document.documentElement.dir = PAGE_LANGUAGES[lang].meta.dir;
}

export const pageWords = (lang: PageLang): PageStrings => PAGE_LANGUAGES[lang].pages;
export const languageMeta = (lang: PageLang): LanguageMeta => PAGE_LANGUAGES[lang].meta;
/** Every language of the catalogue, in its order. */
export const allPageLangs = (): PageLang[] => Object.keys(PAGE_LANGUAGES).filter(isPageLang);
export const pageLanguages = (offered?: readonly string[]): LanguageMeta[] =>
  Object.values(PAGE_LANGUAGES)
    .map((l) => l.meta)
    .filter((m) => !offered || offered.includes(m.code));

/** A catalogue text with its `{name}` variables filled. */
export const say = (text: string, values: Record<string, string | number>) => fillText(text, values);

/** The language of staff-written words (intake questions, console) for a visitor's language. */
export const staffLang = (lang: PageLang): Lang => (lang === "fr" ? "fr" : "en");

/** "12 min", "1 h 05" — waited or estimated durations. */
export function minutes(totalMinutes: number, lang: PageLang): string {
  const m = Math.max(0, Math.round(totalMinutes));
  if (m < 60) return fillText(PAGE_LANGUAGES[lang].pages.mins, { m });
  return fillText(PAGE_LANGUAGES[lang].pages.hours, { h: Math.floor(m / 60), mm: String(m % 60).padStart(2, "0") });
}

export function since(iso: string | null | undefined, nowMs: number): number {
  return iso ? Math.max(0, (nowMs - Date.parse(iso)) / 60_000) : 0;
}
