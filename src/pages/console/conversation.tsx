// The current ticket's conversation with its customer (docs/conversations.md, issue 45): both
// ways, oldest first (GET /v1/tickets/{ticketId}/messages), and a reply box that answers by the
// channel the customer uses (POST …/messages: WhatsApp inside the 24-hour window, else SMS).
// Shown for a ticket with a phone. Read when the ticket changes, after each reply, on each read of
// the desk (`signal`) and every 15 s, since a customer's text announces nothing to the desk.
// Its words are here, not in ./i18n.ts: the card is one file.
import { useEffect, useRef, useState } from "hono/jsx/dom";
import { ApiRefusal } from "../shared/api";
import { languageMeta, type PageLang } from "../shared/i18n";
import { fillText } from "../../domain/languages/catalogue";
import { STAFF_LANGUAGES } from "../../domain/languages/staff.generated";
import { get, post, type Answer } from "./client";
import type { Ticket } from "./desk-view";
import { refusalText } from "./refusal";
import "./conversation.css";

type Message = Answer<"/v1/tickets/{ticketId}/messages">[number];

/** The most a reply takes (the API's limit: three SMS segments). */
const REPLY_MAX = 480;

const CHANNELS: Record<string, string> = { sms: "SMS", whatsapp: "WhatsApp", ussd: "USSD" };

/** The card's words, from the catalogue of languages (`staff.conversation`, docs/languages.md). */
function wordsOf(lang: PageLang) {
  const w = STAFF_LANGUAGES[lang].staff.conversation;
  return {
    ...w,
    channel: CHANNELS,
    status: w.status as Record<string, string>,
    refusals: w.refusals as Record<string, string>,
    sentBy: (channel: string) => fillText(w.sentBy, { channel }),
    tooLong: fillText(w.tooLong, { max: REPLY_MAX }),
  };
}

function refused(err: unknown, lang: PageLang): string {
  const w = wordsOf(lang);
  if (err instanceof ApiRefusal) {
    const reason = typeof err.details.reason === "string" ? err.details.reason : null;
    const own = (reason && w.refusals[reason]) || w.refusals[err.code];
    if (own) return own;
  }
  return refusalText(err, lang);
}

export function Conversation(p: { ticket: Ticket | null; lang: PageLang; timeZone: string | undefined; signal: unknown }) {
  const { ticket, lang } = p;
  const w = wordsOf(lang);
  const ticketId = ticket && ticket.phoneMasked ? ticket.id : null;
  const [messages, setMessages] = useState<Message[] | null>(null);
  const [readError, setReadError] = useState(false);
  const [text, setText] = useState("");
  const [sending, setSending] = useState(false);
  const [notice, setNotice] = useState<{ kind: "ok" | "error"; text: string } | null>(null);
  const shown = useRef<string | null>(null);
  shown.current = ticketId;

  const read = async () => {
    const id = shown.current;
    if (!id) return;
    try {
      const list = await get("/v1/tickets/{ticketId}/messages", { ticketId: id }, { limit: 100 });
      if (shown.current === id) {
        setMessages(list);
        setReadError(false);
      }
    } catch {
      if (shown.current === id) setReadError(true);
    }
  };

  useEffect(() => {
    setMessages(null);
    setReadError(false);
    setText("");
    setNotice(null);
    if (!ticketId) return;
    const timer = setInterval(() => void read(), 15_000);
    return () => clearInterval(timer);
  }, [ticketId]);

  useEffect(() => {
    void read();
  }, [ticketId, p.signal]);

  if (!ticketId) return null;

  const time = (iso: string) =>
    new Intl.DateTimeFormat(languageMeta(lang).locale, { hour: "2-digit", minute: "2-digit", timeZone: p.timeZone }).format(new Date(iso));

  const send = async (e: Event) => {
    e.preventDefault();
    const body = text.trim();
    if (sending || body === "") return;
    if (body.length > REPLY_MAX) return setNotice({ kind: "error", text: w.tooLong });
    setSending(true);
    setNotice(null);
    try {
      const sent = await post("/v1/tickets/{ticketId}/messages", { ticketId }, { text: body });
      setText("");
      setNotice({ kind: "ok", text: w.sentBy(w.channel[sent.channel] ?? sent.channel) });
      setMessages((list) => [...(list ?? []), sent]);
      void read();
    } catch (err) {
      setNotice({ kind: "error", text: refused(err, lang) });
    } finally {
      setSending(false);
    }
  };

  const who = (m: Message) => (m.direction === "in" ? w.customer : m.authorId ? w.staff : w.automatic);
  return (
    <section class="conversation" aria-labelledby="conversation-title" data-conversation={ticketId}>
      <h3 id="conversation-title">{w.title}</h3>
      {readError && (
        <p class="notice error" role="alert">
          {w.readFailed}{" "}
          <button type="button" class="linkish" onClick={() => void read()}>
            {w.retry}
          </button>
        </p>
      )}
      {messages !== null && messages.length === 0 && <p class="muted">{w.empty}</p>}
      {messages !== null && messages.length > 0 && (
        <ol class="messages" aria-live="polite">
          {messages.map((m) => (
            <li class={`message ${m.direction}${m.authorId ? " staff" : ""}`} data-message={m.direction}>
              <p class="meta">
                <strong>{who(m)}</strong> · {w.channel[m.channel]} · <time dateTime={m.createdAt}>{time(m.createdAt)}</time>
                {m.direction === "out" && <span class={`state ${m.status}`}> · {w.status[m.status]}</span>}
              </p>
              <p class="body">{m.body}</p>
            </li>
          ))}
        </ol>
      )}
      <form class="reply" onSubmit={send} noValidate>
        <label for="conversation-reply">{w.reply}</label>
        <textarea
          id="conversation-reply"
          name="text"
          rows={2}
          maxLength={REPLY_MAX}
          value={text}
          onInput={(e: Event) => setText((e.target as HTMLTextAreaElement).value)}
        />
        <button type="submit" class="primary" disabled={sending || text.trim() === ""}>
          {sending ? w.sending : w.send}
        </button>
      </form>
      {notice && (
        <p class={`notice ${notice.kind}`} role={notice.kind === "error" ? "alert" : "status"}>
          {notice.text}
        </p>
      )}
    </section>
  );
}
