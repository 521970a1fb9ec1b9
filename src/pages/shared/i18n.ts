// The pages' languages. The staff pages (console, floor) speak French and English (`Lang`), chosen
// from the signed-in user, the `lang` query parameter or the browser. The public pages (kiosk,
// status page) speak every language of the catalogue (src/domain/languages, `PageLang`), chosen
// from the query, this browser's last choice, the browser, else the location's default.
import { fillText, type LanguageMeta, type PageStrings } from "../../domain/languages/catalogue";
import { PAGE_LANGUAGES } from "../../domain/languages/pages";
import type { Language } from "../../domain/languages";

export type Lang = "fr" | "en";
export type PageLang = Language;

const isLang = (value: string | null | undefined): value is Lang => value === "fr" || value === "en";
const isPageLang = (value: string | null | undefined): value is PageLang => !!value && Object.hasOwn(PAGE_LANGUAGES, value);

export function browserLang(): Lang {
  const fromQuery = new URLSearchParams(location.search).get("lang");
  if (isLang(fromQuery)) return fromQuery;
  const stored = localStorage.getItem("pages:lang");
  if (isLang(stored)) return stored;
  return (navigator.language || "en").toLowerCase().startsWith("fr") ? "fr" : "en";
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
