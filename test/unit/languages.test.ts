import { describe, expect, it } from "vitest";
import { CATALOGUES, LANGUAGES, type Catalogue } from "../../src/domain/languages";
import { PAGE_LANGUAGES } from "../../src/domain/languages/pages.generated";
import { STAFF_LANGUAGES } from "../../src/domain/languages/staff.generated";
import { REFUSALS, TEXT } from "../../src/pages/console/i18n";
import { joinLanguages, joinRefusalText, normalizeText, readKeyword, replyText, smsKeywordOf } from "../../src/domain/keywords";
import { render } from "../../src/domain/notification-templates";
import embedSource from "../../src/widget/embed.js";
import { embedCatalogue } from "../../src/widget/embed.routes";

// The catalogue's completeness (docs/languages.md): every language has every key of English, no
// other key, and each text uses exactly the variables the English one uses (a Spanish SMS missing
// {code} or naming {codigo} would print "—" to every customer).

/** Every text of a catalogue by its path ("messages.ticket.called.body"); keyword lists as one entry each. */
function texts(value: unknown, path = ""): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (typeof value === "string" || Array.isArray(value)) out.set(path, value);
  else if (value && typeof value === "object") {
    for (const [key, inner] of Object.entries(value)) for (const [p, v] of texts(inner, path ? `${path}.${key}` : key)) out.set(p, v);
  }
  return out;
}

const variables = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
const clauses = (text: string) => (text.match(/\[/g) ?? []).length;
const english = texts(CATALOGUES.en as Catalogue);

describe("the catalogue of languages", () => {
  it("is the language files present: French and English first, then by code (de added as its file alone), each naming its own code, and the pages list the same ones", () => {
    // scripts/build-languages.mjs writes the lists from the files of src/domain/languages/ (CI checks they are current).
    expect(LANGUAGES).toEqual(["fr", "en", "ar", "de", "es", "nl", "pt"]);
    for (const language of LANGUAGES) {
      const { meta } = CATALOGUES[language];
      expect(meta.code).toBe(language);
      expect(Intl.DateTimeFormat.supportedLocalesOf([meta.locale])).toEqual([meta.locale]);
      expect(["ltr", "rtl"]).toContain(meta.dir);
    }
    expect(CATALOGUES.ar.meta.dir).toBe("rtl");
    expect(Object.keys(PAGE_LANGUAGES)).toEqual(LANGUAGES);
    expect(Object.keys(STAFF_LANGUAGES)).toEqual(LANGUAGES);
  });

  for (const language of LANGUAGES.filter((l) => l !== "en")) {
    it(`${language}: every key of English and no other, each text with English's variables and optional clauses`, () => {
      const own = texts(CATALOGUES[language] as Catalogue);
      const missing = [...english.keys()].filter((k) => !own.has(k));
      const stray = [...own.keys()].filter((k) => !english.has(k));
      expect({ missing, stray }).toEqual({ missing: [], stray: [] });
      for (const [path, text] of own) {
        const reference = english.get(path);
        if (path.startsWith("meta.")) continue;
        if (Array.isArray(text)) {
          expect(
            text.every((w) => typeof w === "string" && normalizeText(w) !== ""),
            path,
          ).toBe(true);
          continue;
        }
        expect(typeof text, path).toBe("string");
        expect(variables(text as string), `${language} ${path}`).toEqual(variables(reference as string));
        expect(clauses(text as string), `${language} ${path}`).toBe(clauses(reference as string));
        if (reference !== "") expect((text as string).trim(), `${language} ${path}`).not.toBe("");
      }
    });
  }

  it("no SMS word means two different things, whatever the language (AQUI is 'here' in Spanish and Portuguese)", () => {
    const seen = new Map<string, string>();
    for (const language of LANGUAGES) {
      for (const [keyword, words] of Object.entries(CATALOGUES[language].sms.keywords)) {
        for (const word of words) {
          const key = normalizeText(word);
          expect(seen.get(key) ?? keyword, `${language} ${word}`).toBe(keyword);
          seen.set(key, keyword);
        }
      }
    }
    expect(readKeyword("estado por favor")).toMatchObject({ keyword: "status", languages: ["es", "pt"] });
    expect(readKeyword("إلغاء")).toMatchObject({ keyword: "cancel", language: "ar" });
    expect(readKeyword("Annuleer")).toMatchObject({ keyword: "cancel", language: "nl" });
    // German, typed with or without its umlaut; a word German shares keeps English first (the catalogue's order).
    expect(readKeyword("Später 15")).toMatchObject({ keyword: "late", language: "de" });
    expect(readKeyword("SPAETER")).toMatchObject({ keyword: "late", language: "de" });
    expect(readKeyword("storno bitte")).toMatchObject({ keyword: "cancel", language: "de" });
    expect(readKeyword("hier")).toMatchObject({ keyword: "here", languages: ["de", "nl"] });
    expect(readKeyword("status")).toMatchObject({ keyword: "status", language: "en", languages: ["en", "de", "nl"] });
  });

  it("renders in every language with the values filled and optional clauses kept or dropped", () => {
    const values = { code: "A-042", queue: "Accueil", position: 3, wait: 12, counter: "Guichet 2" };
    for (const language of LANGUAGES) {
      const called = render("ticket.called", language, values).body;
      expect(called, language).toContain("A-042");
      expect(called, language).toContain("Guichet 2");
      expect(render("ticket.called", language, { ...values, counter: null }).body, language).not.toMatch(/—|Guichet/);
      expect(replyText(language, "status", { code: "A-042", position: 2, wait: 5 }), language).toMatch(/A-042.*2.*5/s);
    }
    expect(render("ticket.created", "es", values).body).toBe("Está en la fila de Accueil, posición 3, espera estimada 12 min.");
    expect(render("ticket.created", "de", values).body).toBe(
      "Sie sind in der Warteschlange für Accueil, Platz 3, geschätzte Wartezeit 12 Minuten.",
    );
    expect(render("ticket.called", "de", { ...values, counter: null }).body).toBe("Ticket A-042: Bitte kommen Sie jetzt (Accueil).");
  });

  it("the later turn, the verdict and the join by text answer in every language; every join verb and keyword is reserved", () => {
    for (const language of LANGUAGES) {
      expect(replyText(language, "deferred", { code: "A-042", minutes: 15, wait: 20 }), language).toMatch(/A-042.*15.*20/s);
      expect(replyText(language, "feedback", { code: "A-042", score: 4 }), language).toContain("4/5");
      expect(replyText(language, "joined", { queue: "Q", code: "A-042", position: null, wait: null }), language).not.toContain("—");
      expect(joinRefusalText(language, "QUEUE_FULL"), language).not.toBe(joinRefusalText(language, "NOT_A_CODE"));
      for (const verb of CATALOGUES[language].sms.join) {
        expect(joinLanguages(`${verb} mairie`), verb).toContain(language);
        expect(smsKeywordOf(verb), verb).not.toHaveProperty("keyword");
      }
    }
    expect(replyText("es", "deferTooFar", { code: "A-042", max: 30 })).toBe(
      "A-042: podemos aplazar su turno 30 min como máximo. Responda TARDE 30 o menos.",
    );
    expect(replyText("nl", "joinRefused", { queue: "Balie", reason: joinRefusalText("nl", "QUEUE_FULL") })).toBe(
      "Balie: er kan nu geen ticket worden genomen (de rij is vol).",
    );
    expect(smsKeywordOf("tarde")).toEqual({ refused: "TARDE is a reserved keyword" });
    expect(smsKeywordOf("mairie")).toEqual({ keyword: "MAIRIE" });
  });

  it("embed.js knows the catalogue's languages: its LANGS are the served locales' languages, in the catalogue's order", () => {
    expect(embedSource).toContain("const LANGS = Object.keys(MORE.locales);");
    expect(Object.keys(embedCatalogue().locales)).toEqual(LANGUAGES);
  });

  it("the staff pages (console, floor) speak every catalogue language: each console text is filled, with no variable left", () => {
    for (const language of LANGUAGES) {
      const t = TEXT[language];
      expect(STAFF_LANGUAGES[language].staff).toBe(CATALOGUES[language].staff);
      for (const [key, text] of Object.entries(t)) {
        if (typeof text !== "string" || key === "noDesk") continue;
        expect(text, `${language} ${key}`).not.toMatch(/[{}]/);
        expect(text.trim(), `${language} ${key}`).not.toBe("");
      }
      expect(t.called("A-042", "G2"), language).toMatch(/A-042.*G2|G2.*A-042/s);
      expect(t.legOf(2, 3), language).toMatch(/2.*3/s);
      expect(t.alertsFailed("offline", true), language).not.toBe(t.alertsFailed("offline", false));
      expect(t.walkInPhoneHint, language).toContain("\u2066+33 6 12 34 56 78\u2069");
      expect(t.noDesk, language).toContain("POST /v1/locations/{id}/desks");
      expect(Object.keys(REFUSALS[language]).sort(), language).toEqual(Object.keys(REFUSALS.en).sort());
    }
    expect(TEXT.es.previousTitle("A-042")).toBe("¿Qué pasó con A-042?");
    expect(TEXT.ar.statusNames.serving).toBe("قيد الخدمة");
  });

  it("embed.js holds the catalogue's English and French widget and intake words as they are (the other languages are served with it)", () => {
    for (const language of ["en", "fr"] as const) {
      for (const [key, text] of Object.entries(CATALOGUES[language].widget)) {
        expect(embedSource, `${language} ${key}`).toContain(`${key}: ${JSON.stringify(text)}`);
      }
      const { agree: _agree, choose: _choose, ...refusals } = CATALOGUES[language].intake;
      for (const [key, text] of Object.entries(refusals)) {
        const name = `q${key[0]!.toUpperCase()}${key.slice(1)}`;
        expect(embedSource, `${language} ${name}`).toContain(`${name}: ${JSON.stringify(text)}`);
      }
    }
  });

  it("embed.js speaks every catalogue language: each has every word of English's (join, status, booking, questions), with its variables (issue 42)", () => {
    /** The words embed.js holds itself for a language (its `T.<language>` block). */
    const held = (language: string) => {
      const block = new RegExp(`\\n    ${language}: \\{([\\s\\S]*?)\\n    \\},`).exec(embedSource)?.[1] ?? "";
      return Object.fromEntries([...block.matchAll(/(\w+): ("(?:[^"\\]|\\.)*")/g)].map((m) => [m[1]!, JSON.parse(m[2]!) as string]));
    };
    const en = held("en");
    expect(Object.keys(en).length).toBeGreaterThan(70);
    const served = embedCatalogue().words;
    for (const language of LANGUAGES.filter((l) => l !== "en")) {
      const words = language === "fr" ? held("fr") : served[language]!;
      expect(Object.keys(words).sort(), language).toEqual(Object.keys(en).sort());
      for (const [key, text] of Object.entries(words)) {
        expect(text.trim(), `${language} ${key}`).not.toBe("");
        expect(variables(text), `${language} ${key}`).toEqual(variables(en[key]!));
      }
    }
    expect(Object.keys(embedCatalogue().names)).toEqual(LANGUAGES);
  });
});
