// The pages' part of the catalogue: only each language's `meta` and `pages`, so the browser
// bundles (scripts/build-pages.mjs) leave the messages and SMS words out.
import type { LanguageMeta, PageStrings } from "./catalogue";
import { meta as arMeta, pages as arPages } from "./ar";
import { meta as enMeta, pages as enPages } from "./en";
import { meta as esMeta, pages as esPages } from "./es";
import { meta as frMeta, pages as frPages } from "./fr";
import { meta as nlMeta, pages as nlPages } from "./nl";
import { meta as ptMeta, pages as ptPages } from "./pt";
import type { Language } from "./index";

export const PAGE_LANGUAGES: Record<Language, { meta: LanguageMeta; pages: PageStrings }> = {
  fr: { meta: frMeta, pages: frPages },
  en: { meta: enMeta, pages: enPages },
  es: { meta: esMeta, pages: esPages },
  pt: { meta: ptMeta, pages: ptPages },
  ar: { meta: arMeta, pages: arPages },
  nl: { meta: nlMeta, pages: nlPages },
};
