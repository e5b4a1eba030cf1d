/** A number JSON cannot carry: JSON.parse reads `1e999` as Infinity, and JSON.stringify writes null for it, for -Infinity and for NaN alike. */
export class NonFiniteNumberError extends Error {
  constructor(readonly value: number) {
    super(`${value} is not a number JSON can carry (a value such as 1e999 was read as ${value})`);
  }
}

/**
 * JSON with object keys sorted and undefined members left out: equal values give equal text.
 * `refuseNonFinite`: a non-finite number throws a `NonFiniteNumberError` instead of being written
 * as null (so that `1e999` and `-1e999` never give the same text).
 */
export function stableStringify(value: unknown, refuseNonFinite = false): string {
  const text = (v: unknown): string => stableStringify(v, refuseNonFinite);
  if (Array.isArray(value)) return `[${value.map(text).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${text(v)}`).join(',')}}`;
  }
  if (refuseNonFinite && typeof value === 'number' && !Number.isFinite(value)) throw new NonFiniteNumberError(value);
  return JSON.stringify(value) ?? 'null';
}

/** The canonical JSON that is hashed (a pinned definition, an audit record): `stableStringify`, refusing numbers JSON cannot carry. */
export function canonicalJson(value: unknown): string {
  return stableStringify(value, true);
}
