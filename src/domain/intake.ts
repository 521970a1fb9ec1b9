// Intake questions (docs/visits.md): what a service asks a visitor when they take a ticket, so
// the counter knows why they came before they sit down. Pure rules: the definition's shape, and
// the check of a set of answers against it. Storage and the entry channels live in
// tickets/intake.ts.

export const INTAKE_TYPES = ["text", "number", "select", "date", "phone", "email", "consent"] as const;
export type IntakeType = (typeof INTAKE_TYPES)[number];

/** When an answer must be there: at the join, before the ticket is served, or never. */
export const INTAKE_REQUIRED = ["at_join", "at_serve", "never"] as const;
export type IntakeRequired = (typeof INTAKE_REQUIRED)[number];

export interface IntakeLabel {
  fr: string;
  en: string;
}

export interface IntakeOption {
  value: string;
  label: IntakeLabel;
}

export interface IntakeField {
  key: string;
  label: IntakeLabel;
  type: IntakeType;
  options?: IntakeOption[];
  required: IntakeRequired;
  /** A personal answer (an account number, a birth date) is erased by retention and never sent to webhooks. */
  personal: boolean;
}

export type IntakeValue = string | number | boolean;
export type IntakeAnswers = Record<string, IntakeValue>;

/**
 * The answers as a ticket keeps them, split by the definition at the moment they were given:
 * `open` may travel in webhooks and exports; `personal` is the visitor's personal data, which
 * the retention sweep erases with their name and no webhook carries.
 */
export interface SplitAnswers {
  open: IntakeAnswers | null;
  personal: IntakeAnswers | null;
}

export const MAX_INTAKE_FIELDS = 20;
export const MAX_INTAKE_OPTIONS = 50;
export const MAX_TEXT_ANSWER = 500;
export const INTAKE_KEY = /^[a-z][a-z0-9_]{0,39}$/;

/** One refused answer: `field` is `intake.<key>`, as the 400 names it. */
export interface IntakeIssue {
  field: string;
  reason: string;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const PHONE = /^\+[1-9]\d{6,14}$/;
// Deliberately loose (one @, a dot in the domain, no spaces): the counter reads it, nobody mails it from here.
const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/;
// Control characters, bidi overrides and lone surrogates are refused in free text (CONTRACT §10).
// eslint-disable-next-line no-control-regex
const UNSAFE_TEXT =
  /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function isRealDate(value: string): boolean {
  const m = DATE.exec(value);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

/** Why `value` is not an answer to `field` (null: it is one). */
export function answerProblem(field: IntakeField, value: IntakeValue): string | null {
  switch (field.type) {
    case "text":
      if (typeof value !== "string") return "must be a string";
      if (value.trim().length === 0) return "must not be empty";
      if (value.length > MAX_TEXT_ANSWER) return `must be at most ${MAX_TEXT_ANSWER} characters`;
      if (UNSAFE_TEXT.test(value)) return "must not contain control characters or bidi overrides";
      return null;
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? null : "must be a number";
    case "select": {
      const values = (field.options ?? []).map((o) => o.value);
      return typeof value === "string" && values.includes(value) ? null : `must be one of: ${values.join(", ")}`;
    }
    case "date":
      return typeof value === "string" && isRealDate(value) ? null : "must be a date YYYY-MM-DD";
    case "phone":
      return typeof value === "string" && PHONE.test(value) ? null : "must be a phone number in E.164 (+33612345678)";
    case "email":
      return typeof value === "string" && value.length <= 254 && EMAIL.test(value) ? null : "must be an email address";
    case "consent":
      if (typeof value !== "boolean") return "must be true or false";
      return field.required !== "never" && value !== true ? "must be given (true)" : null;
  }
}

/**
 * Checks answers given at a join: each known key's value fits its type, no unknown key, and
 * every `at_join` question is answered. Answers `issues` (all of them, in the definition's
 * order, unknown keys last) or the answers split into open and personal.
 */
export function checkJoinAnswers(
  fields: readonly IntakeField[],
  answers: Readonly<Record<string, IntakeValue | null>>,
): { ok: true; value: SplitAnswers } | { ok: false; issues: IntakeIssue[] } {
  const issues: IntakeIssue[] = [];
  for (const field of fields) {
    const value = answers[field.key];
    if (value === undefined || value === null) {
      if (field.required === "at_join") issues.push({ field: `intake.${field.key}`, reason: "is required" });
      continue;
    }
    const problem = answerProblem(field, value);
    if (problem !== null) issues.push({ field: `intake.${field.key}`, reason: problem });
  }
  issues.push(...unknownKeys(fields, answers));
  if (issues.length > 0) return { ok: false, issues };
  return { ok: true, value: splitAnswers(fields, answers) };
}

/**
 * Checks a staff edit: the given keys only (null clears an answer), merged over what the ticket
 * holds. An `at_join` answer may be changed but not cleared.
 */
export function checkEdit(
  fields: readonly IntakeField[],
  current: IntakeAnswers,
  changes: Readonly<Record<string, IntakeValue | null>>,
): { ok: true; value: SplitAnswers } | { ok: false; issues: IntakeIssue[] } {
  const issues: IntakeIssue[] = [];
  const merged: Record<string, IntakeValue | null> = { ...current };
  for (const field of fields) {
    if (!(field.key in changes)) continue;
    const value = changes[field.key]!;
    if (value === null) {
      if (field.required === "at_join") issues.push({ field: `intake.${field.key}`, reason: "is required and cannot be cleared" });
      merged[field.key] = null;
      continue;
    }
    const problem = answerProblem(field, value);
    if (problem !== null) issues.push({ field: `intake.${field.key}`, reason: problem });
    merged[field.key] = value;
  }
  issues.push(...unknownKeys(fields, changes));
  if (issues.length > 0) return { ok: false, issues };
  return { ok: true, value: splitAnswers(fields, merged) };
}

function unknownKeys(fields: readonly IntakeField[], answers: Readonly<Record<string, unknown>>): IntakeIssue[] {
  const known = new Set(fields.map((f) => f.key));
  return Object.keys(answers)
    .filter((k) => !known.has(k))
    .map((k) => ({ field: `intake.${k}`, reason: "is not a question of this service" }));
}

/**
 * Keeps the answers of current questions only (a question removed since is dropped on the next
 * write), each on its side of the personal line. An empty side is null, so a ticket without
 * answers stores nothing.
 */
export function splitAnswers(fields: readonly IntakeField[], answers: Readonly<Record<string, IntakeValue | null>>): SplitAnswers {
  const open: IntakeAnswers = {};
  const personal: IntakeAnswers = {};
  for (const field of fields) {
    const value = answers[field.key];
    if (value === undefined || value === null) continue;
    (field.personal ? personal : open)[field.key] = value;
  }
  return { open: Object.keys(open).length > 0 ? open : null, personal: Object.keys(personal).length > 0 ? personal : null };
}

/** Problems of a definition the zod schema cannot see: duplicate keys, options where they belong. */
export function definitionIssues(fields: readonly IntakeField[]): IntakeIssue[] {
  const issues: IntakeIssue[] = [];
  const seen = new Set<string>();
  fields.forEach((f, i) => {
    if (seen.has(f.key)) issues.push({ field: `fields.${i}.key`, reason: `duplicate key ${f.key}` });
    seen.add(f.key);
    if (f.type === "select") {
      if (!f.options || f.options.length === 0) issues.push({ field: `fields.${i}.options`, reason: "a select needs options" });
      else {
        const values = new Set<string>();
        f.options.forEach((o, j) => {
          if (values.has(o.value)) issues.push({ field: `fields.${i}.options.${j}.value`, reason: `duplicate option ${o.value}` });
          values.add(o.value);
        });
      }
    } else if (f.options !== undefined) {
      issues.push({ field: `fields.${i}.options`, reason: "only a select has options" });
    }
  });
  return issues;
}
