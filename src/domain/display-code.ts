// Display letters and codes (CONTRACT §3): each queue of a service gets a letter, A, B, … Z,
// then AA, AB, …; a ticket shows its queue's letter and its number, as in A-042.

/** The letter at a 0-based index: 0 → A, 25 → Z, 26 → AA (bijective base 26). */
export function letterAt(index: number): string {
  let n = index + 1;
  let out = "";
  while (n > 0) {
    const rem = (n - 1) % 26;
    out = String.fromCharCode(65 + rem) + out;
    n = Math.floor((n - 1) / 26);
  }
  return out;
}

/** The first letter no queue of the service uses yet (letters of deleted queues are reused). */
export function nextLetter(used: Iterable<string>): string {
  const taken = new Set(used);
  for (let i = 0; ; i++) {
    const letter = letterAt(i);
    if (!taken.has(letter)) return letter;
  }
}

/** Three digits at least, so codes line up on a display board; more when the number needs them. */
export function displayCode(letter: string, number: number): string {
  return `${letter}-${String(number).padStart(3, "0")}`;
}
