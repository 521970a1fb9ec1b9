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

export function randomString(length: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  let out = "";
  for (const b of bytes) out += ALPHABET[b & 31];
  return out;
}

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomString(BODY_LENGTH)}`;
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
