import { fail, show } from './item-checks.js';

const INTEGER_TEXT = /^\d{1,5}$/;
const DECIMAL_TEXT = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;

/** An antenna port: an integer 0..65535 (LLRP's range), as a number or digit string; absent or null is null. */
export function antennaField(raw: unknown, field: string): number | null {
  if (raw === undefined || raw === null) return null;
  let value: number;
  if (typeof raw === 'number') value = raw;
  else if (typeof raw === 'string' && INTEGER_TEXT.test(raw.trim())) value = Number(raw.trim());
  else fail(`${field} must be an integer, got ${show(raw)}`);
  if (!Number.isInteger(value) || value < 0 || value > 65535) {
    fail(`${field} must be an integer from 0 to 65535, got ${show(raw)}`);
  }
  return value;
}

/** A finite number, or a decimal string (some readers quote RSSI); absent or null is null. */
export function numberField(raw: unknown, field: string): number | null {
  if (raw === undefined || raw === null) return null;
  let value: number;
  if (typeof raw === 'number') value = raw;
  else if (typeof raw === 'string' && DECIMAL_TEXT.test(raw.trim())) value = Number(raw.trim());
  else fail(`${field} must be a number, got ${show(raw)}`);
  if (!Number.isFinite(value)) fail(`${field} must be a finite number, got ${show(raw)}`);
  return value;
}

/** The first non-empty string (trimmed) or finite number (as text) among the candidates, or null. */
export function identity(...candidates: unknown[]): string | null {
  for (const candidate of candidates) {
    if (typeof candidate === 'string' && candidate.trim() !== '') return candidate.trim();
    if (typeof candidate === 'number' && Number.isFinite(candidate)) return String(candidate);
  }
  return null;
}
