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
  // Written out by hand (no closure, no entries, filter or map arrays): every audit record is hashed through it.
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      // A hole stays empty, as `map` and `join` leave it.
      if (i in value) out += stableStringify(value[i], refuseNonFinite);
    }
    return `${out}]`;
  }
  if (value && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    // The default sort compares UTF-16 code units, as `<` does.
    const keys = Object.keys(object).sort();
    let out = '{';
    for (const key of keys) {
      const member = object[key];
      if (member === undefined) continue;
      if (out.length > 1) out += ',';
      out += `${JSON.stringify(key)}:${stableStringify(member, refuseNonFinite)}`;
    }
    return `${out}}`;
  }
  if (refuseNonFinite && typeof value === 'number' && !Number.isFinite(value)) throw new NonFiniteNumberError(value);
  return JSON.stringify(value) ?? 'null';
}

/** The canonical JSON that is hashed (a pinned definition, an audit record): `stableStringify`, refusing numbers JSON cannot carry. */
export function canonicalJson(value: unknown): string {
  return stableStringify(value, true);
}
