/** The default branch of an exhaustive switch: the compiler proves it unreachable, and at run time it says what slipped through. */
export function assertNever(value: never): never {
  throw new Error(`Unexpected value: ${JSON.stringify(value)}`);
}
