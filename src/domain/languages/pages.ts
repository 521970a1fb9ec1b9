// The pages' part of the catalogue: only each language's `meta`, `pages` and `intake`, so the browser
// bundles (scripts/build-pages.mjs) leave the messages and SMS words out.
import type { IntakeWords, LanguageMeta, PageStrings } from "./catalogue";
import { intake as arIntake, meta as arMeta, pages as arPages } from "./ar";
import { intake as enIntake, meta as enMeta, pages as enPages } from "./en";
import { intake as esIntake, meta as esMeta, pages as esPages } from "./es";
import { intake as frIntake, meta as frMeta, pages as frPages } from "./fr";
import { intake as nlIntake, meta as nlMeta, pages as nlPages } from "./nl";
import { intake as ptIntake, meta as ptMeta, pages as ptPages } from "./pt";
import type { Language } from "./index";

export const PAGE_LANGUAGES: Record<Language, { meta: LanguageMeta; pages: PageStrings; intake: IntakeWords }> = {
  fr: { meta: frMeta, pages: frPages, intake: frIntake },
  en: { meta: enMeta, pages: enPages, intake: enIntake },
  es: { meta: esMeta, pages: esPages, intake: esIntake },
  pt: { meta: ptMeta, pages: ptPages, intake: ptIntake },
  ar: { meta: arMeta, pages: arPages, intake: arIntake },
  nl: { meta: nlMeta, pages: nlPages, intake: nlIntake },
};
