/**
 * The size of what the gate is asked to decide on, measured before anything else looks at it: a
 * request nested deeper than any real tool's arguments, or larger than any reasonable one, is
 * refused whole. Measured with an explicit stack, never by recursion, so no depth can overflow the
 * call stack here; everything after this check (the fence, the audit's masking, schema validation,
 * the JSON writer) only ever sees values within these limits.
 */

/** How deep arguments may nest (an object or array inside another counts one level). */
export const MAX_ARGUMENT_DEPTH = 64;
/** How many characters of strings and keys, together, arguments may carry. */
export const MAX_ARGUMENT_CHARS = 4 * 1024 * 1024;
/** How many values (objects, arrays, strings, numbers, …) and keys arguments may count. */
export const MAX_ARGUMENT_VALUES = 100_000;

/**
 * Why `value` is over a limit, as a sentence for the person, or undefined when it is within them.
 * Stops at the first limit passed, so its cost is bounded by the limits, not by the value.
 */
export function argumentLimitProblem(value: unknown): string | undefined {
  const tooMany = `the arguments have more than ${MAX_ARGUMENT_VALUES} values`;
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  let chars = 0;
  let values = 1;
  while (stack.length > 0) {
    const { value: item, depth } = stack.pop()!;
    if (typeof item === 'string') chars += item.length;
    else if (typeof item === 'object' && item !== null) {
      if (depth >= MAX_ARGUMENT_DEPTH) return `the arguments are nested deeper than ${MAX_ARGUMENT_DEPTH} levels`;
      // Counted as they are stacked, so a huge array is refused before it is copied onto the stack.
      if (Array.isArray(item)) {
        if ((values += item.length) > MAX_ARGUMENT_VALUES) return tooMany;
        for (const child of item) stack.push({ value: child, depth: depth + 1 });
      } else {
        const keys = Object.keys(item);
        if ((values += 2 * keys.length) > MAX_ARGUMENT_VALUES) return tooMany;
        for (const key of keys) {
          chars += key.length;
          stack.push({ value: (item as Record<string, unknown>)[key], depth: depth + 1 });
        }
      }
    }
    if (chars > MAX_ARGUMENT_CHARS) return `the arguments carry more than ${MAX_ARGUMENT_CHARS} characters`;
  }
  return undefined;
}
