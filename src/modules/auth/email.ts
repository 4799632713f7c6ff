import { AuthError } from './errors.ts';

/** An email address as the product compares it (`normalized`) and as it was typed, tidied (`display`). */
export interface ParsedEmail {
  normalized: string;
  display: string;
}

const MAX_LENGTH = 254;
// Control, format (zero-width, bidi overrides), private-use, surrogate and unassigned code points.
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Co}\p{Cs}\p{Cn}]/u;
// Printable ASCII without space and '@': what is left of an address after NFKC (ADR 0063).
const PART = /^[\x21-\x3f\x41-\x7e]+$/;

const invalidEmail = (detail: string) => new AuthError('invalid_email', `The email address is not valid: ${detail}.`);

/**
 * The one reading of an email address (ADR 0063): Unicode NFKC, surrounding whitespace dropped,
 * one trailing dot of the domain dropped, then ASCII only and lower-cased. Anything else is
 * refused (422 invalid_email), so every spelling that finds an account is that account's key.
 */
export function parseEmail(typed: string): ParsedEmail {
  const composed = typed.normalize('NFKC');
  if (INVISIBLE.test(composed)) {
    throw invalidEmail('it holds control or invisible characters');
  }
  const trimmed = composed.trim();
  const at = trimmed.lastIndexOf('@');
  const local = trimmed.slice(0, at);
  // The absolute form `example.com.` names the same domain as `example.com`.
  const domain = trimmed.slice(at + 1).replace(/\.$/, '');
  if (at < 1 || !PART.test(local) || !PART.test(domain)) {
    throw invalidEmail('it must be one local part, an @ and a domain, in letters, digits and ASCII punctuation');
  }
  if (domain.split('.').some((label) => label === '')) {
    throw invalidEmail('the domain has an empty label');
  }
  const display = `${local}@${domain}`;
  if (display.length > MAX_LENGTH) {
    throw invalidEmail(`it is longer than ${MAX_LENGTH} characters`);
  }
  return { normalized: display.toLowerCase(), display };
}

/** The key under which an address is stored, looked up, rate-limited and audited. */
export const normalizeEmail = (typed: string): string => parseEmail(typed).normalized;
