// The staff pages' part of the catalogue (the console and the floor): only each language's `meta`
// and `staff`, so their browser bundles leave the messages and SMS words out.
import type { LanguageMeta, StaffStrings } from "./catalogue";
import { meta as arMeta, staff as arStaff } from "./ar";
import { meta as enMeta, staff as enStaff } from "./en";
import { meta as esMeta, staff as esStaff } from "./es";
import { meta as frMeta, staff as frStaff } from "./fr";
import { meta as nlMeta, staff as nlStaff } from "./nl";
import { meta as ptMeta, staff as ptStaff } from "./pt";
import type { Language } from "./index";

export const STAFF_LANGUAGES: Record<Language, { meta: LanguageMeta; staff: StaffStrings }> = {
  fr: { meta: frMeta, staff: frStaff },
  en: { meta: enMeta, staff: enStaff },
  es: { meta: esMeta, staff: esStaff },
  pt: { meta: ptMeta, staff: ptStaff },
  ar: { meta: arMeta, staff: arStaff },
  nl: { meta: nlMeta, staff: nlStaff },
};
