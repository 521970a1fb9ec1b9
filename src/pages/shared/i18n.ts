// French and English for the pages: a dictionary per page, the language chosen from the signed-in
// user (console, floor), the `lang` query parameter, or the browser (public pages, with a switch).
export type Lang = "fr" | "en";

export function browserLang(): Lang {
  const fromQuery = new URLSearchParams(location.search).get("lang");
  if (fromQuery === "fr" || fromQuery === "en") return fromQuery;
  const stored = localStorage.getItem("pages:lang");
  if (stored === "fr" || stored === "en") return stored;
  return (navigator.language || "en").toLowerCase().startsWith("fr") ? "fr" : "en";
}

export function rememberLang(lang: Lang): void {
  localStorage.setItem("pages:lang", lang);
  document.documentElement.lang = lang;
}

/** "12 min", "1 h 05" — waited or estimated durations. */
export function minutes(totalMinutes: number, lang: Lang): string {
  const m = Math.max(0, Math.round(totalMinutes));
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  return lang === "fr" ? `${h} h ${String(m % 60).padStart(2, "0")}` : `${h} h ${String(m % 60).padStart(2, "0")} min`;
}

export function since(iso: string | null | undefined, nowMs: number): number {
  return iso ? Math.max(0, (nowMs - Date.parse(iso)) / 60_000) : 0;
}
