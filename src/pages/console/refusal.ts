// A refusal of the API in the clerk's words: the common ones in the page's language, else the API's message.
import { ApiRefusal } from "../shared/api";
import type { PageLang } from "../shared/i18n";
import { REFUSALS } from "./i18n";

export function refusalText(err: unknown, lang: PageLang): string {
  if (err instanceof ApiRefusal) {
    const reason = typeof err.details.reason === "string" ? err.details.reason : null;
    return (reason && REFUSALS[lang][reason]) || REFUSALS[lang][err.code] || err.message || err.code;
  }
  return String(err);
}
