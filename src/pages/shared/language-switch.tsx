// The public pages' language switch: one button per language the location offers, each named
// in its own language (and marked with it, so a screen reader says it right).
import { pageLanguages, type PageLang } from "./i18n";

export function LanguageSwitch(p: {
  lang: PageLang;
  offered?: readonly string[] | undefined;
  label: string;
  onPick: (lang: PageLang) => void;
}) {
  const others = pageLanguages(p.offered).filter((m) => m.code !== p.lang);
  if (others.length === 0) return null;
  return (
    <nav class="langs" aria-label={p.label}>
      {others.map((m) => (
        <button type="button" lang={m.code} dir={m.dir} onClick={() => p.onPick(m.code as PageLang)}>
          {m.name}
        </button>
      ))}
    </nav>
  );
}

/** The staff pages' language: a list of every catalogue language, each named in its own language. */
export function LanguageSelect(p: { lang: PageLang; label: string; onPick: (lang: PageLang) => void }) {
  return (
    <select
      class="lang-select"
      aria-label={p.label}
      value={p.lang}
      onChange={(e: Event) => p.onPick((e.target as HTMLSelectElement).value as PageLang)}
    >
      {pageLanguages().map((m) => (
        <option value={m.code} lang={m.code} dir={m.dir} selected={m.code === p.lang}>
          {m.name}
        </option>
      ))}
    </select>
  );
}
