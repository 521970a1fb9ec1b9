import { joinRefusalText } from "./keywords";
import { CATALOGUES, fillText, isLanguage, type Language, type UssdKey } from "./languages";

// The USSD menus (docs/conversations.md): what a customer on a basic phone sees after dialling
// the organization's code. The aggregator sends every input of the session joined by `*`
// ("1*2": join, the second queue); each answer is one screen, `CON …` (the session goes on) or
// `END …` (it ends). Every flow takes at most three screens, and every screen fits 160
// characters, "CON "/"END " included, in each language.

export const USSD_SCREEN_MAX = 160;

/**
 * The menus speak every language of the catalogue (src/domain/languages, `ussd`): the
 * organization's default language first; `0` on the first screen lists the languages it offers,
 * each in its own name, and `0*n` is the first screen in the n-th of them.
 */
export type UssdLanguage = Language;
/** The menus' language for an organization's (default) language: English if it is not in the catalogue. */
export const ussdLanguageOf = (language: string | null | undefined): UssdLanguage => (isLanguage(language) ? language : "en");
/** Queues offered on the list screen at most (one digit each). */
export const USSD_QUEUES_MAX = 9;
const NAME_MAX = 30;
const QUEUE_NAME_MAX = 24;

/** Where the session stands, read from its inputs. */
export type UssdStep =
  | { step: "main" }
  | { step: "languages" }
  | { step: "queues" }
  | { step: "join"; choice: number }
  | { step: "position" }
  | { step: "here" }
  | { step: "confirmCancel" }
  | { step: "cancel" }
  | { step: "keep" }
  | { step: "invalid" };

export interface UssdInput {
  /** The language chosen with "0*n" (n from 1, in the list the "0" screen shows), else null (the organization's). */
  languageChoice: number | null;
  step: UssdStep;
}

/** "", "1", "1*2", "0", "0*5", "0*5*4*1": the inputs as the aggregator joins them. */
export function readUssdText(text: string): UssdInput {
  let inputs = text.trim() === "" ? [] : text.split("*").map((s) => s.trim());
  let languageChoice: number | null = null;
  if (inputs[0] === "0") {
    if (inputs.length === 1) return { languageChoice: null, step: { step: "languages" } };
    if (!/^[1-9]$/.test(inputs[1]!)) return { languageChoice: null, step: { step: "invalid" } };
    languageChoice = Number(inputs[1]);
    inputs = inputs.slice(2);
  }
  const [first, second, ...rest] = inputs;
  const step = ((): UssdStep => {
    if (rest.length > 0) return { step: "invalid" };
    if (first === undefined) return { step: "main" };
    if (first === "1") {
      if (second === undefined) return { step: "queues" };
      return /^[1-9]$/.test(second) ? { step: "join", choice: Number(second) } : { step: "invalid" };
    }
    if (second !== undefined && first !== "4") return { step: "invalid" };
    if (first === "2") return { step: "position" };
    if (first === "3") return { step: "here" };
    if (first === "4") {
      if (second === undefined) return { step: "confirmCancel" };
      if (second === "1") return { step: "cancel" };
      if (second === "2") return { step: "keep" };
    }
    return { step: "invalid" };
  })();
  return { languageChoice, step };
}

function cut(text: string, max: number): string {
  const clean = text.replace(/\s+/g, " ").trim();
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}

const con = (body: string) => `CON ${body}`;
const end = (body: string) => `END ${body}`;

export interface TicketFacts {
  code: string;
  position: number | null;
  wait: number | null;
}

const say = (language: UssdLanguage, key: UssdKey, values: Record<string, string | number> = {}) =>
  fillText(CATALOGUES[language].ussd[key], values);

/** The ticket's facts as the catalogue's variables; an unknown position or wait shows "?". */
const facts = (language: UssdLanguage, t: TicketFacts) => {
  const numbers = { code: t.code, position: t.position ?? "?", wait: t.wait ?? "?" };
  return { ...numbers, place: say(language, t.position ? "inLine" : "called", numbers) };
};

/** The screens, each a complete answer ("CON …" or "END …"). */
export const ussdScreens = {
  /**
   * The first screen; with `others` (the other languages offered, in their own names) a last
   * line `0 …` opens the list of languages, its names cut to fit the screen.
   */
  main(language: UssdLanguage, organizationName: string, others: string[] = []): string {
    const screen = con(say(language, "main", { name: cut(organizationName, NAME_MAX) }));
    if (others.length === 0) return screen;
    const room = USSD_SCREEN_MAX - screen.length - "\n0 ".length;
    return room > 1 ? `${screen}\n0 ${cut(others.join("/"), room)}` : screen;
  },
  /** The languages the organization offers, each in its own name, numbered as `0*n` reads them. */
  languages(names: string[]): { screen: string; shown: number } {
    let screen = "CON";
    let shown = 0;
    for (const name of names.slice(0, USSD_QUEUES_MAX)) {
      const line = `${shown === 0 ? " " : "\n"}${shown + 1} ${name}`;
      if (screen.length + line.length > USSD_SCREEN_MAX) break;
      screen += line;
      shown += 1;
    }
    return { screen, shown };
  },
  /** The numbered queues that fit the screen (their order is the numbering the join reads). */
  queues(language: UssdLanguage, names: string[]): { screen: string; shown: number } {
    if (names.length === 0) return { screen: end(say(language, "noQueue")), shown: 0 };
    let screen = con(say(language, "chooseQueue"));
    let shown = 0;
    for (const name of names.slice(0, USSD_QUEUES_MAX)) {
      const line = `\n${shown + 1} ${cut(name, QUEUE_NAME_MAX)}`;
      if (screen.length + line.length > USSD_SCREEN_MAX) break;
      screen += line;
      shown += 1;
    }
    return { screen, shown };
  },
  joined: (language: UssdLanguage, t: TicketFacts, queueName: string, serviceCode: string) =>
    end(say(language, "joined", { ...facts(language, t), queue: cut(queueName, QUEUE_NAME_MAX), serviceCode })),
  already: (language: UssdLanguage, t: TicketFacts) => end(say(language, "already", facts(language, t))),
  refused: (language: UssdLanguage, errorCode: string) => end(say(language, "refused", { reason: joinRefusalText(language, errorCode) })),
  position: (language: UssdLanguage, t: TicketFacts) => end(say(language, "position", facts(language, t))),
  noTicket: (language: UssdLanguage) => end(say(language, "noTicket")),
  here: (language: UssdLanguage, t: TicketFacts) => end(say(language, "here", facts(language, t))),
  hereRefused: (language: UssdLanguage, t: TicketFacts) => end(say(language, "hereRefused", facts(language, t))),
  confirmCancel: (language: UssdLanguage, t: TicketFacts) => con(say(language, "confirmCancel", facts(language, t))),
  cancelled: (language: UssdLanguage, t: TicketFacts) => end(say(language, "cancelled", facts(language, t))),
  cancelRefused: (language: UssdLanguage, t: TicketFacts) => end(say(language, "cancelRefused", facts(language, t))),
  kept: (language: UssdLanguage, t: TicketFacts) => end(say(language, "kept", facts(language, t))),
  invalid: (language: UssdLanguage, serviceCode: string) => end(say(language, "invalid", { serviceCode })),
  /** Over an inbound limit (docs/conversations.md): the session ends and nothing acts. */
  busy: (language: UssdLanguage) => end(say(language, "busy")),
};
