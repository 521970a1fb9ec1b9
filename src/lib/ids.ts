// Opaque, unguessable identifiers with a type prefix (CONTRACT §1). 20 characters of a
// 32-letter alphabet carry 100 random bits.
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
const BODY_LENGTH = 20;
/** A ticket's own random part: 20 characters, 100 bits (issue 26; ids made before carry 12, 60 bits, and keep working). */
const TICKET_SUFFIX_LENGTH = 20;
const OLD_TICKET_SUFFIX_LENGTH = 12;

export type IdPrefix =
  | "org"
  | "loc"
  | "svc"
  | "que"
  | "tkt"
  | "usr"
  | "evt"
  | "key"
  | "qrt"
  | "nfc"
  | "ntf"
  | "whk"
  | "rjn"
  | "inv"
  | "dlv"
  | "req"
  | "scn"
  | "chk"
  | "dsk"
  | "ivt"
  | "apt"
  | "hld";

/**
 * Random bytes drawn from the system's generator 4 KiB at a time, each handed out once (issue 43:
 * a call of getRandomValues per id cost a join 0.03-0.05 ms per id, three ids a join). Filled
 * on first use: the runtime gives no random values at the top level of a module.
 */
const pool = new Uint8Array(4096);
let poolAt = pool.length;

export function randomString(length: number): string {
  if (length > pool.length) throw new RangeError(`at most ${pool.length} random characters`);
  if (poolAt + length > pool.length) {
    crypto.getRandomValues(pool);
    poolAt = 0;
  }
  let out = "";
  for (let i = poolAt; i < poolAt + length; i++) out += ALPHABET[pool[i]! & 31];
  poolAt += length;
  return out;
}

export function newId(prefix: IdPrefix): string {
  const body = randomString(BODY_LENGTH);
  // A live organization's id never carries the twin's mark (docs/test-mode.md): redrawn, 1 time in 2^20.
  if (prefix === "org" && body.startsWith(TWIN_MARK)) return newId(prefix);
  return `${prefix}_${body}`;
}

/**
 * The test-mode twin of an organization (docs/test-mode.md) has an id that says so: `org_test…`.
 * Code that holds only an organization id (a notification's delivery, a key being minted) knows
 * from it alone that nothing may leave through a real provider.
 */
const TWIN_MARK = "test";

export function newTwinOrganizationId(): string {
  return `org_${TWIN_MARK}${randomString(BODY_LENGTH - TWIN_MARK.length)}`;
}

export function isTwinOrganizationId(organizationId: string): boolean {
  return organizationId.startsWith(`org_${TWIN_MARK}`);
}

const BODY = `[${ALPHABET}]{${BODY_LENGTH}}`;
const ID_PATTERN = new RegExp(`^[a-z]{3}_${BODY}$`);
const TICKET_PATTERN = new RegExp(`^tkt_(${BODY})(?:[${ALPHABET}]{${TICKET_SUFFIX_LENGTH}}|[${ALPHABET}]{${OLD_TICKET_SUFFIX_LENGTH}})$`);

export function isId(prefix: IdPrefix, value: string): boolean {
  return value.startsWith(`${prefix}_`) && ID_PATTERN.test(value);
}

/** A ticket id embeds its queue's id, so a ticket route reaches its room without a read. */
export function newTicketId(queueId: string): string {
  return `tkt_${queueId.slice(4)}${randomString(TICKET_SUFFIX_LENGTH)}`;
}

export function queueIdOfTicket(ticketId: string): string | null {
  const m = TICKET_PATTERN.exec(ticketId);
  return m ? `que_${m[1]}` : null;
}
