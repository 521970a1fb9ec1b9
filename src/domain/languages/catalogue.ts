// The shape of one language of the catalogue (docs/languages.md). Each language is one file of
// this folder exporting `meta`, `messages`, `sms`, `receipt` and `pages`; ./index.ts lists them.
// Texts are data: a `{name}` is filled in, a `[ … ]` clause is dropped when a variable inside it
// has no value. The types make a missing or stray key a compile error; test/unit/languages.test.ts
// also checks that every text uses the same variables as the English one.

/** The messages a ticket's customer (and, for a few, the staff) receives: SMS, push, in-app, e-mail. */
export const TEMPLATE_KEYS = [
  "ticket.created",
  "ticket.almost_called",
  "ticket.called",
  "ticket.served",
  "ticket.cancelled",
  "ticket.skipped",
  "ticket.transferred",
  "ticket.expired",
  "ticket.recovered",
  "ticket.auto_skipped",
  "review.request",
  "inactivity.warning",
  "appointment.reminder",
  "appointment.confirmed",
  "appointment.rescheduled",
  "appointment.cancelled",
  "appointment.no_show",
  "queue.status_changed",
  "queue.capacity_warning",
  "queue.long_wait",
  "ticket.no_show",
  "member.joined",
  "system.announcement",
  "ticket.recalled",
  "ticket.held",
  "ticket.resumed",
  "ticket.stepped_back",
  "phone.code",
] as const;
export type TemplateKey = (typeof TEMPLATE_KEYS)[number];

export interface TemplateText {
  title: string;
  body: string;
}

export interface LanguageMeta {
  /** ISO 639-1 code: what the API accepts as `language`. */
  code: string;
  /** The language's own name, as a visitor looks for it in a language switch. */
  name: string;
  dir: "ltr" | "rtl";
  /** BCP 47 tag for dates, numbers and the board's voice. */
  locale: string;
}

export type Keyword = "here" | "late" | "cancel" | "status" | "stop" | "start" | "help";

export interface SmsWords {
  /** The words a customer may text, upper case without accents (the first word of the text decides). */
  keywords: Record<Keyword, readonly string[]>;
  /** Verbs that join a queue by text: "JOIN A". */
  join: readonly string[];
  /** Our answers: {code}, {position}, {wait}, {options}, {places}, {minutes}, {max}, {score}, {queue}, {reason}. */
  replies: Record<ReplyKey, string>;
  /** Why a join by text or USSD was refused, in a few words, by the join's error code (`other` for any else): the {reason} of `joinRefused`. */
  joinRefusals: Record<JoinRefusalKey, string>;
}

export type ReplyKey =
  | "here"
  | "late"
  | "deferred"
  | "deferTooFar"
  | "cancel"
  | "status"
  | "statusCalled"
  | "stop"
  | "start"
  | "help"
  | "unknownNumber"
  | "refused"
  | "received"
  | "choose"
  | "feedback"
  | "feedbackAlready"
  | "joined"
  | "joinRefused";

export type JoinRefusalKey = "QUEUE_FULL" | "QUEUE_PAUSED" | "QUEUE_CLOSED" | "QUOTA_EXCEEDED" | "API_RATE_LIMIT_EXCEEDED" | "other";

export interface ReceiptLabels {
  ticket: string;
  follow: string;
  keep: string;
}

/** The public pages' words: the kiosk, the visitor's status page, their refusals and the display board. */
export interface PageStrings {
  /** A duration of an hour or more: {h} hours, {mm} minutes (two digits). */
  hours: string;
  /** A duration under an hour: {m} minutes. */
  mins: string;
  kiosk: Record<KioskKey, string>;
  status: Record<StatusKey, string>;
  refusals: Record<RefusalKey, string>;
  checkIn: Record<CheckInKey, string>;
  /** The customer's appointment page (/appointments/{id}#token=…). */
  appointment: Record<AppointmentPageKey, string>;
  board: Record<BoardKey, string>;
}

export type KioskKey =
  | "welcome"
  | "choose"
  | "name"
  | "phone"
  | "take"
  | "yourTicket"
  | "position"
  | "next"
  | "ahead"
  | "estimate"
  | "scan"
  | "print"
  | "done"
  | "none"
  | "missing"
  | "phoneHint"
  | "phoneBad"
  | "reset"
  | "issuedAt"
  | "questions"
  | "back"
  | "printing"
  | "printed"
  | "printFailed"
  | "pair"
  | "paired"
  | "notPaired"
  | "noWebUsb"
  | "haveAppointment"
  | "codeTitle"
  | "codeLabel"
  | "codeHint"
  | "checkIn"
  | "appointmentAt"
  | "alreadyIn"
  | "languages";

export type StatusKey =
  | "title"
  | "position"
  | "next"
  | "ahead"
  | "estimate"
  | "yourTurn"
  | "goTo"
  | "serving"
  | "held"
  | "served"
  | "cancelled"
  | "skipped"
  | "expired"
  | "leave"
  | "confirmLeave"
  | "stepBack"
  | "confirmStepBackTitle"
  | "confirmStepBack"
  | "confirmStepBackYes"
  | "cancel"
  | "steppedBack"
  | "notify"
  | "notifyOn"
  | "notifyUnsupported"
  | "notFound"
  | "reconnecting"
  | "phoneTitle"
  | "phoneHint"
  | "phoneExpired"
  | "codeLabel"
  | "confirmCode"
  | "newCode"
  | "codeSent"
  | "wrongCodeOne"
  | "wrongCodeMany"
  | "wrongCodeNone"
  | "phoneVerified"
  | "rateTitle"
  | "rateHint"
  | "rateScore"
  | "rateComment"
  | "rated"
  | "rateClosed"
  | "late"
  | "lateTitle"
  | "lateHint"
  | "lateMinutes"
  | "backAt"
  | "lateLimit"
  | "lateTooFar"
  | "lateTooLate"
  | "lateFailed"
  | "leg"
  | "nextLeg"
  | "languages";

export type RefusalKey =
  "phone" | "phoneCap" | "botCheck" | "name" | "paused" | "closed" | "full" | "tooMany" | "notSetUp" | "network" | "other";

export type AppointmentPageKey =
  | "title"
  | "at"
  | "code"
  | "codeHint"
  | "opensAt"
  | "checkIn"
  | "checkedIn"
  | "followTicket"
  | "cancel"
  | "confirmTitle"
  | "confirmText"
  | "confirmYes"
  | "keep"
  | "cancelled"
  | "noShow"
  | "notFound"
  | "reschedule"
  | "rescheduleTitle"
  | "day"
  | "noSlots"
  | "currentSlot"
  | "move"
  | "moved"
  | "slotTaken"
  | "keepTime"
  | "languages";

export type CheckInKey = "notOpen" | "unknown" | "cancelled" | "missed" | "format";

/** The board's own words and the widget's words it shows (embed.js `T`). */
export type BoardKey =
  | "title"
  | "goTo"
  | "noCall"
  | "say"
  | "sayCode"
  | "closed"
  | "reopens"
  | "appointment"
  | "waiting"
  | "wait"
  | "min"
  | "next"
  | "noQueues"
  | "sound"
  | "called"
  | "noVoice";

/**
 * The USSD menus' words (src/domain/ussd-menu.ts): {name} the organization, {queue} a queue,
 * {code} the ticket, {position}, {wait} minutes, {place} the `inLine` or `called` sentence,
 * {reason} a join refusal, {serviceCode} the code to dial. Each screen stays within 160
 * characters with a long organization or queue name (test/integration/ussd.test.ts).
 */
export type UssdKey =
  | "main"
  | "chooseQueue"
  | "noQueue"
  | "joined"
  | "already"
  | "refused"
  | "position"
  | "inLine"
  | "called"
  | "noTicket"
  | "here"
  | "hereRefused"
  | "confirmCancel"
  | "cancelled"
  | "cancelRefused"
  | "kept"
  | "invalid"
  | "busy";

// The staff pages (console, floor): docs/languages.md. Texts with {variables}, filled by the pages.
export type ConsoleWordKey =
  | "title"
  | "languages"
  | "signIn"
  | "email"
  | "password"
  | "ssoSignIn"
  | "ssoOr"
  | "ssoNeedsEmail"
  | "ssoNotConfigured"
  | "ssoFailed"
  | "signOut"
  | "chooseDesk"
  | "location"
  | "open"
  | "openedBy"
  | "yours"
  | "closeDesk"
  | "floor"
  | "waiting"
  | "held"
  | "nobodyWaiting"
  | "nothingHeld"
  | "current"
  | "noCurrent"
  | "code"
  | "name"
  | "service"
  | "waited"
  | "recalls"
  | "status"
  | "note"
  | "callNext"
  | "recall"
  | "startServing"
  | "complete"
  | "noShow"
  | "hold"
  | "resume"
  | "returnFirst"
  | "returnLast"
  | "transfer"
  | "walkIn"
  | "vip"
  | "priority"
  | "outcome"
  | "noOutcome"
  | "confirmComplete"
  | "cancel"
  | "previousTitle"
  | "previousText"
  | "wasServed"
  | "wasAbsent"
  | "targetQueue"
  | "transferTo"
  | "colleagues"
  | "prioritize"
  | "confirmTransfer"
  | "visitorName"
  | "walkInPhone"
  | "walkInPhoneHint"
  | "walkInPhoneBad"
  | "walkInLanguage"
  | "asVip"
  | "addTicket"
  | "live"
  | "reconnecting"
  | "resynced"
  | "called"
  | "walkInAdded"
  | "deskClosed"
  | "noDesk"
  | "noOrg"
  | "shortcuts"
  | "network"
  | "queues"
  | "phone"
  | "labels"
  | "intake"
  | "yes"
  | "no"
  | "actions"
  | "markVip"
  | "markedVip"
  | "undoVip"
  | "unmarkVip"
  | "unmarkedVip"
  | "branch"
  | "appointment"
  | "visitLeg"
  | "legOf"
  | "appointmentAt"
  | "deferredUntil"
  | "placement"
  | "appointments"
  | "noAppointments"
  | "time"
  | "customer"
  | "checkIn"
  | "checkInFor"
  | "checkedIn"
  | "readFailed"
  | "staffAlert"
  | "alertsFailed"
  | "alertsFailedKept"
  | "appointmentsFailed"
  | "retry"
  | "moreWaiting"
  | "intakeBefore"
  | "intakeBeforeText"
  | "intakeSave"
  | "intakeSaved";
export type ConversationWordKey =
  "title" | "empty" | "customer" | "automatic" | "staff" | "reply" | "send" | "sending" | "sentBy" | "tooLong" | "readFailed" | "retry";
export type FloorWordKey =
  | "title"
  | "console"
  | "desks"
  | "queues"
  | "desk"
  | "operator"
  | "serving"
  | "forHowLong"
  | "closed"
  | "idle"
  | "queue"
  | "waiting"
  | "longest"
  | "held"
  | "servedToday"
  | "location"
  | "signInTitle"
  | "line"
  | "code"
  | "marks"
  | "nobody"
  | "target"
  | "noTarget"
  | "avgWait"
  | "avgService"
  | "noShows"
  | "alert"
  | "noRoute"
  | "updated";
export type StaffRefusalWordKey =
  | "QUEUE_EMPTY"
  | "OPERATOR_UNAVAILABLE"
  | "desk_occupied"
  | "operator_has_desk"
  | "RECALL_LIMIT_REACHED"
  | "INTAKE_REQUIRED"
  | "QUEUE_CLOSED"
  | "AUTHENTICATION_ERROR"
  | "TOKEN_EXPIRED"
  | "NETWORK"
  | "INVALID_STATE";
/** The booking part of the embeddable widget (src/widget/embed.js): put into the served script for the languages beyond en and fr. */
export type WidgetBookingKey =
  | "bookTitle"
  | "bookService"
  | "bookDay"
  | "bookSlot"
  | "bookDetails"
  | "bookBack"
  | "bookNoSlot"
  | "bookNoService"
  | "bookName"
  | "bookPhone"
  | "bookEmail"
  | "bookLang"
  | "bookConfirm"
  | "bookHeld"
  | "bookTaken"
  | "bookNameMissing"
  | "bookPhoneBad"
  | "bookEmailBad"
  | "bookDone"
  | "bookCode"
  | "bookCodeHint"
  | "bookManage"
  | "bookAnother"
  | "bookWith";

/** The join and status words of the embeddable widget (embed.js `T`; issue 42: every catalogue language). */
export type WidgetJoinKey =
  | "waiting"
  | "wait"
  | "min"
  | "serving"
  | "next"
  | "nowServing"
  | "called"
  | "none"
  | "active"
  | "paused"
  | "closed"
  | "pausedMsg"
  | "closedMsg"
  | "fullMsg"
  | "notFound"
  | "orgNotFound"
  | "auth"
  | "offline"
  | "config"
  | "loading"
  | "failed"
  | "join"
  | "name"
  | "phone"
  | "party"
  | "sending"
  | "ticket"
  | "position"
  | "another"
  | "joinFailed"
  | "yourTicket"
  | "noQueues"
  | "sound"
  | "yourTurn"
  | "yourTurnNow"
  | "leave"
  | "left"
  | "served"
  | "missed"
  | "ended"
  | "calledAt"
  | "onHold"
  | "late"
  | "back"
  | "lateNo";
export type WidgetWords = Record<WidgetBookingKey | WidgetJoinKey, string>;

/** A service's questions on a page (src/pages/shared/intake.tsx, embed.js `q…`): the refusal of an answer by the question's type. */
export type IntakeWordKey =
  "optional" | "required" | "consent" | "text" | "number" | "select" | "date" | "phone" | "email" | "agree" | "choose";
export type IntakeWords = Record<IntakeWordKey, string>;

export interface StaffStrings {
  console: Record<ConsoleWordKey, string> & {
    statusNames: Record<"waiting" | "called" | "serving" | "served" | "skipped" | "expired" | "cancelled" | "held", string>;
    appointmentStatus: Record<"booked" | "checked_in" | "cancelled" | "no_show", string>;
  };
  conversation: Record<ConversationWordKey, string> & {
    status: Record<"received" | "queued" | "sent" | "delivered" | "failed", string>;
    refusals: Record<"no_phone" | "opted_out" | "PLAN_REQUIRED" | "QUOTA_EXCEEDED", string>;
  };
  floor: Record<FloorWordKey, string> & {
    levels: Record<"amber" | "red", string>;
    statusNames: Record<"called" | "serving" | "held", string>;
  };
  refusals: Record<StaffRefusalWordKey, string>;
}

export interface Catalogue {
  meta: LanguageMeta;
  messages: Record<TemplateKey, TemplateText>;
  sms: SmsWords;
  receipt: ReceiptLabels;
  pages: PageStrings;
  ussd: Record<UssdKey, string>;
  placement: Record<PlacementKey, string>;
  staff: StaffStrings;
  widget: WidgetWords;
  intake: IntakeWords;
}

/** Fills `{name}` and keeps a `[ … ]` clause only when every variable inside it has a value. */
export function fillText(text: string, values: Record<string, string | number | null | undefined>): string {
  const has = (name: string) => values[name] !== null && values[name] !== undefined && values[name] !== "";
  const optional = text.replace(/\[([^\]]*)\]/g, (_m, inner: string) => {
    const names = [...inner.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
    return names.every(has) ? inner : "";
  });
  return optional.replace(/\{(\w+)\}/g, (_m, name: string) => (has(name) ? String(values[name]) : "—"));
}

/**
 * The blend's placement reasons (src/domain/blend.ts, docs/blend.md), one per rule (issue 38):
 * `{time}`, `{since}`, `{opens}` are wall-clock times, `{minutes}` and `{cap}` whole minutes.
 */
export type PlacementKey =
  "priority" | "appointmentDue" | "appointmentEarly" | "walkInOverCap" | "lateAppointment" | "walkInArrival" | "walkInArrivalCapped";
