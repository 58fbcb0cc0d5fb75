import { fail, show } from './item-checks.js';
import type { TagType } from './types.js';

/** Longest tag value the master data accepts (API-SPEC: tag value length 1..255). */
export const MAX_TAG_LENGTH = 255;

/** Hex EPC upper-cased, whitespace, ':' and '-' removed. */
export function normalizeTagValue(v: string): string {
  return v.replace(/[\s:-]/g, '').toUpperCase();
}

const HEX = /^[0-9A-F]+$/;
// C0 controls and DEL; the same characters the tag value pattern in API-SPEC refuses, plus tab and newlines.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\x00-\x1F\x7F]/;

/** An RFID EPC given as hex text: normalized, and refused unless every character is a hex digit. */
export function hexTag(raw: unknown, field: string): string {
  if (raw === undefined || raw === null) fail(`${field} is missing`);
  if (typeof raw !== 'string') fail(`${field} must be a string, got ${show(raw)}`);
  const value = normalizeTagValue(raw);
  if (value === '') fail(`${field} is empty`);
  if (!HEX.test(value)) fail(`${field} ${show(raw)} is not hexadecimal`);
  if (value.length > MAX_TAG_LENGTH) fail(`${field} is longer than ${MAX_TAG_LENGTH} characters`);
  return value;
}

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** An EPC given as base64 (standard or URL-safe alphabet, padding optional), returned as upper-case hex. */
export function base64Tag(raw: unknown, field: string): string {
  if (typeof raw !== 'string') fail(`${field} must be a string, got ${show(raw)}`);
  const text = raw.trim();
  const body = text.replace(/=+$/, '');
  if (body === '') fail(`${field} is empty`);
  if (!BASE64.test(text) || body.length % 4 === 1 || (text.length > body.length && text.length % 4 !== 0)) {
    fail(`${field} ${show(raw)} is not base64`);
  }
  const hex = Buffer.from(body.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('hex').toUpperCase();
  if (hex === '') fail(`${field} is empty`);
  if (hex.length > MAX_TAG_LENGTH) fail(`${field} is longer than ${MAX_TAG_LENGTH} hex characters`);
  return hex;
}

/** A tag value of the given type; see docs/reader-formats.md for the rules per type. */
export function typedTag(raw: unknown, type: TagType, field: string): string {
  if (type === 'rfid') return hexTag(raw, field);
  if (typeof raw !== 'string') fail(`${field} must be a string, got ${show(raw)}`);
  const value = type === 'ble' ? normalizeTagValue(raw) : raw.trim();
  if (value === '') fail(`${field} is empty`);
  if (CONTROL.test(value)) fail(`${field} contains control characters`);
  if (value.length > MAX_TAG_LENGTH) fail(`${field} is longer than ${MAX_TAG_LENGTH} characters`);
  return value;
}
