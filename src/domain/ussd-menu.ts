import { joinRefusalText } from "./keywords";

// The USSD menus (docs/conversations.md): what a customer on a basic phone sees after dialling
// the organization's code. The aggregator sends every input of the session joined by `*`
// ("1*2": join, the second queue); each answer is one screen, `CON …` (the session goes on) or
// `END …` (it ends). Every flow takes at most three screens, and every screen fits 160
// characters, "CON "/"END " included, in each language.

export const USSD_SCREEN_MAX = 160;

/**
 * The menus speak French and English only (their texts fit 160 characters, checked per language):
 * an organization whose language is another one of the catalogue gets English menus, "0" switches
 * between the two. The SMS replies and messages speak all of src/domain/languages.
 */
export type UssdLanguage = "fr" | "en";
/** The menus' language for an organization's (default) language. */
export const ussdLanguageOf = (language: string | null | undefined): UssdLanguage => (language === "fr" ? "fr" : "en");
/** Queues offered on the list screen at most (one digit each). */
export const USSD_QUEUES_MAX = 9;
const NAME_MAX = 30;
const QUEUE_NAME_MAX = 24;

/** Where the session stands, read from its inputs. */
export type UssdStep =
  | { step: "main" }
  | { step: "queues" }
  | { step: "join"; choice: number }
  | { step: "position" }
  | { step: "here" }
  | { step: "confirmCancel" }
  | { step: "cancel" }
  | { step: "keep" }
  | { step: "invalid" };

export interface UssdInput {
  /** The language asked with "0" on the first screen, else null (the organization's). */
  switched: boolean;
  step: UssdStep;
}

/** "", "1", "1*2", "0*4*1": the inputs as the aggregator joins them. */
export function readUssdText(text: string): UssdInput {
  let inputs = text.trim() === "" ? [] : text.split("*").map((s) => s.trim());
  const switched = inputs[0] === "0";
  if (switched) inputs = inputs.slice(1);
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
  return { switched, step };
}

export const otherLanguage = (language: UssdLanguage): UssdLanguage => (language === "fr" ? "en" : "fr");

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

const TEXTS = {
  fr: {
    main: (name: string) => `${name}\n1 Prendre un ticket\n2 Ma position\n3 Je suis là\n4 Annuler mon ticket\n0 English`,
    chooseQueue: "Choisissez une file :",
    noQueue: "Aucune file ouverte pour le moment.",
    joined: (t: TicketFacts, queue: string, code: string) =>
      `Ticket ${t.code} (${queue}) : n°${t.position ?? "?"}, environ ${t.wait ?? "?"} min. À votre arrivée, composez ${code} puis 3.`,
    already: (t: TicketFacts) => `Vous avez déjà le ticket ${t.code} : ${positionText("fr", t)}`,
    refused: (reason: string) => `Pas de ticket pour le moment : ${reason}.`,
    position: (t: TicketFacts) => `${t.code} : ${positionText("fr", t)}`,
    noTicket: "Aucun ticket en cours pour ce numéro. Choisissez 1 pour en prendre un.",
    here: (t: TicketFacts) => `${t.code} : merci, l'accueil sait que vous êtes là.`,
    hereRefused: (t: TicketFacts) => `${t.code} : impossible de signaler votre arrivée, votre ticket n'est plus en attente.`,
    confirmCancel: (t: TicketFacts) => `Annuler le ticket ${t.code} ?\n1 Oui\n2 Non`,
    cancelled: (t: TicketFacts) => `${t.code} : votre ticket est annulé.`,
    cancelRefused: (t: TicketFacts) => `${t.code} : impossible d'annuler, votre ticket n'est plus en attente.`,
    kept: (t: TicketFacts) => `Votre ticket ${t.code} est conservé.`,
    invalid: (code: string) => `Choix invalide. Composez à nouveau ${code}.`,
    busy: "Trop de demandes pour le moment. Réessayez dans quelques minutes.",
  },
  en: {
    main: (name: string) => `${name}\n1 Take a ticket\n2 My position\n3 I'm here\n4 Cancel my ticket\n0 Français`,
    chooseQueue: "Choose a line:",
    noQueue: "No line is open at the moment.",
    joined: (t: TicketFacts, queue: string, code: string) =>
      `Ticket ${t.code} (${queue}): number ${t.position ?? "?"}, about ${t.wait ?? "?"} min. When you arrive, dial ${code} then 3.`,
    already: (t: TicketFacts) => `You already have ticket ${t.code}: ${positionText("en", t)}`,
    refused: (reason: string) => `No ticket for now: ${reason}.`,
    position: (t: TicketFacts) => `${t.code}: ${positionText("en", t)}`,
    noTicket: "No ticket for this number. Choose 1 to take one.",
    here: (t: TicketFacts) => `${t.code}: thank you, the staff know you are here.`,
    hereRefused: (t: TicketFacts) => `${t.code}: your arrival cannot be noted, your ticket is no longer waiting.`,
    confirmCancel: (t: TicketFacts) => `Cancel ticket ${t.code}?\n1 Yes\n2 No`,
    cancelled: (t: TicketFacts) => `${t.code}: your ticket is cancelled.`,
    cancelRefused: (t: TicketFacts) => `${t.code}: it cannot be cancelled, your ticket is no longer waiting.`,
    kept: (t: TicketFacts) => `Your ticket ${t.code} is kept.`,
    invalid: (code: string) => `Invalid choice. Dial ${code} again.`,
    busy: "Too many requests right now. Please try again in a few minutes.",
  },
} as const;

function positionText(language: UssdLanguage, t: TicketFacts): string {
  if (language === "fr") {
    return t.position ? `n°${t.position} dans la file, environ ${t.wait ?? "?"} min.` : "vous êtes appelé(e), présentez-vous.";
  }
  return t.position ? `number ${t.position} in line, about ${t.wait ?? "?"} min.` : "you are being called, please come forward.";
}

/** The screens, each a complete answer ("CON …" or "END …"). */
export const ussdScreens = {
  main: (language: UssdLanguage, organizationName: string) => con(TEXTS[language].main(cut(organizationName, NAME_MAX))),
  /** The numbered queues that fit the screen (their order is the numbering the join reads). */
  queues(language: UssdLanguage, names: string[]): { screen: string; shown: number } {
    if (names.length === 0) return { screen: end(TEXTS[language].noQueue), shown: 0 };
    let screen = con(TEXTS[language].chooseQueue);
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
    end(TEXTS[language].joined(t, cut(queueName, QUEUE_NAME_MAX), serviceCode)),
  already: (language: UssdLanguage, t: TicketFacts) => end(TEXTS[language].already(t)),
  refused: (language: UssdLanguage, errorCode: string) => end(TEXTS[language].refused(joinRefusalText(language, errorCode))),
  position: (language: UssdLanguage, t: TicketFacts) => end(TEXTS[language].position(t)),
  noTicket: (language: UssdLanguage) => end(TEXTS[language].noTicket),
  here: (language: UssdLanguage, t: TicketFacts) => end(TEXTS[language].here(t)),
  hereRefused: (language: UssdLanguage, t: TicketFacts) => end(TEXTS[language].hereRefused(t)),
  confirmCancel: (language: UssdLanguage, t: TicketFacts) => con(TEXTS[language].confirmCancel(t)),
  cancelled: (language: UssdLanguage, t: TicketFacts) => end(TEXTS[language].cancelled(t)),
  cancelRefused: (language: UssdLanguage, t: TicketFacts) => end(TEXTS[language].cancelRefused(t)),
  kept: (language: UssdLanguage, t: TicketFacts) => end(TEXTS[language].kept(t)),
  invalid: (language: UssdLanguage, serviceCode: string) => end(TEXTS[language].invalid(serviceCode)),
  /** Over an inbound limit (docs/conversations.md): the session ends and nothing acts. */
  busy: (language: UssdLanguage) => end(TEXTS[language].busy),
};
