import { parsePhoneNumberFromString } from "libphonenumber-js/mobile";

// The visitor's phone as staff see it on a ticket (issue 27, the console's card): enough to ask
// "is your number ending in 78?", never the number itself. The full number stays in the room
// and in D1 for the SMS channel and inbound matching; no ticket projection carries it.

const HIDDEN = "•";

/**
 * "+33 6 12 34 56 78" → "+33 6 •• •• •• 78": the country code, the first digit of the national
 * number and its last two, in the number's own international grouping. Null when no phone.
 * A number the numbering plans do not know keeps only its last two digits.
 */
export function maskPhone(phone: string | null): string | null {
  if (phone === null || phone.trim() === "") return null;
  const parsed = parsePhoneNumberFromString(phone.replace(/[\s().-]/g, ""));
  if (!parsed) {
    const digits = phone.replace(/\D/g, "");
    return HIDDEN.repeat(Math.max(0, digits.length - 2)) + digits.slice(-2);
  }
  const prefix = `+${parsed.countryCallingCode}`;
  const national = parsed.formatInternational().slice(prefix.length).trim();
  const total = national.replace(/\D/g, "").length;
  let seen = 0;
  const masked = national.replace(/\d/g, (d) => {
    seen += 1;
    return seen === 1 || seen > total - 2 ? d : HIDDEN;
  });
  return `${prefix} ${masked}`;
}
