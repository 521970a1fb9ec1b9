// The catalogue of languages (docs/languages.md): one file per language beside this one. Adding
// one is adding its file: scripts/build-languages.mjs writes the lists from the files present
// (catalogues.generated.ts here; pages.generated.ts and staff.generated.ts for the browser bundles),
// French and English first, then the others by code: the order of the language switches.
import type { Catalogue } from "./catalogue";
import { CATALOGUES } from "./catalogues.generated";

export { CATALOGUES };

export type Language = keyof typeof CATALOGUES;
export const LANGUAGES = Object.keys(CATALOGUES) as [Language, ...Language[]];

export const isLanguage = (value: unknown): value is Language => typeof value === "string" && Object.hasOwn(CATALOGUES, value);

export const catalogue = (language: Language): Catalogue => CATALOGUES[language];

/** The language's own name ("العربية", "Español"), as a speaker of it looks for it in a list. */
export const languageName = (language: Language): string => CATALOGUES[language].meta.name;

export * from "./catalogue";

/**
 * The languages an organization offers (its `languages` setting), in the catalogue's order; null
 * (never set) offers the whole catalogue, including languages added to it later.
 */
export function offeredLanguages(setting: readonly string[] | null | undefined): Language[] {
  if (!setting || setting.length === 0) return [...LANGUAGES];
  return LANGUAGES.filter((code) => setting.includes(code));
}

/** The visitor's language when the organization offers it, else the organization's default (never an error). */
export function offeredOr(language: Language, setting: readonly string[] | null | undefined, fallback: Language): Language {
  return offeredLanguages(setting).includes(language) ? language : fallback;
}

/** A location's default language while its organization offers it, else the organization's (docs/languages.md). */
export function placeLanguage(
  locationDefault: Language | null | undefined,
  setting: readonly string[] | null | undefined,
  organizationDefault: Language,
): Language {
  return locationDefault && offeredLanguages(setting).includes(locationDefault) ? locationDefault : organizationDefault;
}
